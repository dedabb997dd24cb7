import { afterEach, describe, expect, it } from 'vitest';
import { PII } from '../fakes/analytics-insights-hostile.ts';
import { insightsSections, missedAnHourAgo } from '../helpers/digest.ts';
import { CHANNEL, Harness } from '../helpers/harness.ts';
import { eventually } from '../helpers/net.ts';
import { listedGaps } from '../helpers/reports.ts';

/**
 * `/insights`, the digest's section and Draft it over what real readers send (the emulator's
 * mix, test/fakes/analytics-insights-hostile.ts): their personal data never reaches Slack or
 * the agent, a failed optional page leaves a report saying what is missing, `ctr` reads the
 * same in either unit, typing prefixes are folded.
 */

let h: Harness;
afterEach(async () => {
  await h.close();
});

async function started(): Promise<Harness> {
  const harness = await Harness.create({ env: { DOCS_BASE_URL: 'https://docs.acme.com' } });
  await harness.start();
  return harness;
}

const reports = () =>
  h.slack.history(CHANNEL).filter((m) => m.metadata?.event_type === 'docs_insights_report');

async function insightsReport(text = '14d') {
  await h.command(text, { command: '/insights' });
  const [report] = await eventually(
    () => (reports().length ? reports() : undefined),
    'the report',
    10_000,
  );
  return report!;
}

/** Everything the bot sent out: Slack calls and answers, the agent's requests, its log. */
const sentAnywhere = () =>
  JSON.stringify([h.slack.calls, h.slack.responses, h.api.requests.map((r) => r.body)]) + h.logs;

/** The prompt a Draft it form opened with. */
const initialPrompt = (view: unknown) =>
  String(
    (view as { blocks: { element?: { initial_value?: string } }[] }).blocks[0]?.element
      ?.initial_value,
  );

describe('personal data readers wrote', () => {
  it('reaches neither the report, nor Draft it, nor the agent: placeholders stand in', async () => {
    h = await started();
    h.api.insights.mix({ pii: true });
    const report = await insightsReport();
    const shown = JSON.stringify(report.blocks);
    for (const placeholder of ['[email]', '[key]', '[phone]', '[secret]'])
      expect(shown).toContain(placeholder);

    // Draft it on every gap listed: the forms' prompts carry the evidence, masked.
    for (const gap of listedGaps(report)) await h.choose(report.ts, `draft:${gap.id}`);
    const forms = await eventually(
      () => (h.slack.views.length === listedGaps(report).length ? h.slack.views : undefined),
      'a form for each gap',
    );
    const formWith = (text: string) => {
      const form = forms.find((f) => initialPrompt(f.view).includes(text));
      if (!form) throw new Error(`no Draft it form holding ${text}`);
      return form;
    };
    const question = formWith('My key [key] returns 401, email me at [email]');
    formWith('reach me on [phone] or [email]');
    await h.submitView(question.view, { draft: { prompt: initialPrompt(question.view) } });
    const create = await eventually(() => h.api.requestsTo('create')[0], 'the job');
    expect(JSON.stringify(create.body)).toContain('[key]');

    const out = sentAnywhere();
    for (const secret of Object.values(PII)) expect(out).not.toContain(secret);
  });

  it("reaches nothing from the digest's insights section either", async () => {
    ({ h } = await missedAnHourAgo());
    h.api.insights.mix({ pii: true });
    await h.start();
    const [section] = await eventually(
      () => (insightsSections(h).length ? insightsSections(h) : undefined),
      'the section',
      10_000,
    );
    expect(JSON.stringify(section?.blocks)).toContain('[email]');
    const out = sentAnywhere();
    for (const secret of Object.values(PII)) expect(out).not.toContain(secret);
  });
});

describe('a failed optional page', () => {
  it('leaves /insights a report of what was read, saying what is missing and why', async () => {
    h = await started();
    h.api.inject('feedback', { status: 503 }, 100);
    const report = await insightsReport();
    const shown = JSON.stringify(report.blocks);
    expect(shown).toContain('Could not read feedback comments: the Mintlify API answered 503.');
    expect(shown).toContain('Pages readers disliked');
    expect(shown).toContain('*14×* unanswered');
    expect(h.logs).not.toContain('insights.failed');
  });

  it("leaves the digest's section posted with that note, not failed and retried", async () => {
    ({ h } = await missedAnHourAgo());
    h.api.inject('feedback', { status: 503 }, 100);
    await h.start();
    const [section] = await eventually(
      () => (insightsSections(h).length ? insightsSections(h) : undefined),
      'the section',
      10_000,
    );
    expect(JSON.stringify(section?.blocks)).toContain('Could not read feedback comments');
    expect(h.logs).not.toContain('digest.failed');
  });
});

describe('search rows', () => {
  it('read ctr sent in percent as percent', async () => {
    h = await started();
    h.api.insights.mix({ ctrUnit: 'percent' });
    const shown = JSON.stringify((await insightsReport()).blocks);
    // The emulator's click-through for "quickstart" is about 80 %, by the day's data: read in
    // percent it shows as such, never as 8,000 %.
    const ctr = /“quickstart” {2}\*[\d,]+\* searches · CTR (\d+(?:\.\d)?)%/.exec(shown)?.[1];
    expect(Number(ctr)).toBeGreaterThan(70);
    expect(Number(ctr)).toBeLessThan(90);
    expect(shown).not.toMatch(/CTR \d{3,}/);
  });

  it('fold typing prefixes into the query they grew into', async () => {
    h = await started();
    h.api.insights.mix({ typingPrefixes: true });
    const shown = JSON.stringify((await insightsReport('30d')).blocks);
    expect(shown).toContain('“webhook signature”');
    for (const prefix of ['webho', 'webhook sig', 'webhook signa', 'rate lim', 'rate limi'])
      expect(shown).not.toContain(`“${prefix}”`);
  });
});
