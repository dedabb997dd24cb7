import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ROTATE_KEY_QUESTIONS } from '../fakes/analytics-insights-seed.ts';
import { CHANNEL, Harness, PROJECT, USER } from '../helpers/harness.ts';
import { eventually, sleep } from '../helpers/net.ts';
import { gapId, listedGaps } from '../helpers/reports.ts';
import { slackLimitProblems } from '../helpers/slack-limits.ts';

let h: Harness;
beforeEach(async () => {
  h = await Harness.create({ mode: 'http', env: { DOCS_BASE_URL: 'https://docs.acme.com' } });
  await h.start();
});
afterEach(async () => {
  await h.close();
});

const INSIGHT_KINDS = ['searches', 'assistant', 'feedback', 'feedbackByPage'] as const;
const insightRequests = () => INSIGHT_KINDS.flatMap((k) => h.api.requestsTo(k));
const jobRoots = () => h.roots().filter((m) => m.metadata?.event_type !== 'docs_insights_report');
const reports = () =>
  h.slack.history(CHANNEL).filter((m) => m.metadata?.event_type === 'docs_insights_report');

describe('/insights', () => {
  it('posts the report with the seeded gaps, disliked pages and top searches', async () => {
    const ack = await h.command('14d', { command: '/insights' });
    expect(ack.status).toBe(200);
    expect(ack.body).toBeNull();
    const [report] = await eventually(
      () => (reports().length ? reports() : undefined),
      'report',
      10_000,
    );
    expect(report?.text).toMatch(
      /^Docs insights: .* \(UTC\): \d+ content gaps, \d+ pages readers disliked, [\d,]+ searches\.$/,
    );
    expect(slackLimitProblems(report!)).toEqual([]);
    // What Slack shows (a button's value is data it never renders).
    const blocks = JSON.stringify(report?.blocks, (k, v) => (k === 'value' ? undefined : v));
    expect(blocks).toContain('Content gaps');
    // The rotate-key need is one gap: its questions, its searches and its comments.
    expect(blocks).toMatch(
      /:question: “[^”]+”\\n\*14×\* unanswered · \*\d+×\* searched, no clicks · \d+ comments · 13 other wordings/,
    );
    expect(ROTATE_KEY_QUESTIONS.some((q) => blocks.includes(`“${q}”`))).toBe(true);
    expect(blocks).toContain('“rotate api key”');
    expect(listedGaps(report).length).toBeGreaterThan(0);
    expect(blocks).toContain('Pages readers disliked');
    expect(blocks).toContain(
      '<https://docs.acme.com/guides/authentication|/guides/authentication>',
    );
    // The seeded comment pings nobody: escaped.
    expect(blocks).toContain('confusing &amp; wrong &lt;!channel&gt;');
    expect(blocks).not.toContain('<!channel>');
    expect(blocks).toContain('Top searches');
    expect(blocks).toContain('most clicked: <https://docs.acme.com/quickstart|/quickstart>');
    expect(blocks).toContain('grouped into topics by the words they share');
    // Logged once the bot has Slack's answer, which may be a moment after Slack has the post.
    await eventually(() => h.logs.includes('insights.posted'), 'the insights.posted log line');
    await h.slack.dump('slack-view-out/insights.json');
  });

  it.each([
    ['yesterday', "don't understand"],
    ['2026-01-01 2026-06-01', '90 days'],
  ])('answers "/insights %s" with what is wrong, fetching nothing', async (text, problem) => {
    const ack = await h.command(text, { command: '/insights' });
    expect(ack.body).toMatchObject({ response_type: 'ephemeral' });
    const reply = String(ack.body?.text);
    expect(reply.toLowerCase()).toContain(problem);
    expect(reply).toContain('/insights 30d');
    expect(insightRequests()).toHaveLength(0);
    expect(reports()).toHaveLength(0);
  });

  it('tells the user plainly when the API fails, and posts nothing', async () => {
    h.api.inject('searches', {
      status: 400,
      details: [{ path: ['dateFrom'], message: 'Invalid date' }],
    });
    const ack = await h.command('7d', { command: '/insights' });
    const reply = await h.slack.waitForResponse(
      (r) => r.id === ack.responseUrl.split('/').pop(),
      10_000,
    );
    expect(reply.body).toMatchObject({ response_type: 'ephemeral' });
    expect(JSON.stringify(reply.body)).toContain('Invalid date');
    expect(reports()).toHaveLength(0);
    expect(h.logs).toContain('insights.failed');
  });

  it('says when the analytics budget refreshes, sending nothing', async () => {
    const store = await h.openStore();
    const now = Date.now();
    for (let i = 0; i < 100; i++)
      await store.takeBudgetSlot('analytics', now - 20 * 60_000 + i, 3_600_000, 100);
    await store.close();
    const ack = await h.command('7d', { command: '/insights' });
    const reply = await h.slack.waitForResponse(
      (r) => r.id === ack.responseUrl.split('/').pop(),
      5_000,
    );
    expect(JSON.stringify(reply.body)).toContain('analytics budget');
    expect(JSON.stringify(reply.body)).toContain('refreshes at');
    expect(insightRequests()).toHaveLength(0);
  });
});

describe('Draft it', () => {
  async function posted() {
    await h.command('14d', { command: '/insights' });
    const [report] = await eventually(
      () => (reports().length ? reports() : undefined),
      'report',
      10_000,
    );
    return report!;
  }
  const isRotate = (text: string) => ROTATE_KEY_QUESTIONS.some((q) => text.includes(`“${q}”`));

  it('opens a form with a prompt from the evidence and the budget, and starts exactly one job with the edited prompt', async () => {
    const report = await posted();
    expect(slackLimitProblems(report)).toEqual([]);
    const click = await h.choose(report.ts, `draft:${gapId(report, isRotate)}`);
    expect(click.status).toBe(200);
    const opened = await eventually(() => h.slack.views[0], 'views.open');
    expect(opened.user).toBe(USER);
    const view = opened.view;
    const shown = JSON.stringify(view.blocks);
    expect(shown).toContain('Asked the docs assistant 14 times and got no answer');
    expect(ROTATE_KEY_QUESTIONS.some((q) => shown.includes(q))).toBe(true);
    expect(shown).toContain('100* of 100 uses left this hour for project');
    expect(h.api.requestsTo('create')).toHaveLength(0);

    const empty = await h.submitView(view, { draft: { prompt: '  ' } });
    expect(empty.body).toMatchObject({
      response_action: 'errors',
      errors: { draft: expect.stringContaining('Write what the docs agent') },
    });

    const edited = 'Add a page on rotating API keys <without> downtime & link it';
    const sent = await h.submitView(view, { draft: { prompt: edited } });
    expect(sent.status).toBe(200);
    expect(sent.body?.response_action).toBeUndefined();
    const create = await eventually(() => h.api.requestsTo('create')[0], 'the create');
    expect(create.body).toMatchObject({ prompt: edited });
    const root = await eventually(() => jobRoots()[0], 'the root');
    // The root links back to the report it was drafted from, for the job's whole life.
    const backlink = `<https://acme.slack.com/archives/${CHANNEL}/p${report.ts.replace('.', '')}|a content gap in the insights report>`;
    expect(JSON.stringify(root.blocks)).toContain(`Drafted from ${backlink}`);
    // Slack sent the same submission again: still one job.
    await h.submitView(view, { draft: { prompt: edited } });
    await eventually(() => h.logs.includes('insight_draft.duplicate'), 'the duplicate seen');
    expect(h.api.requestsTo('create')).toHaveLength(1);
    expect(jobRoots()).toHaveLength(1);
    h.api.complete(h.api.createdJobs()[0]!.id, 'https://github.com/acme/docs/pull/7');
    await eventually(
      () => JSON.stringify(jobRoots()[0]?.blocks).includes('View pull request'),
      'the root updated',
    );
    expect(JSON.stringify(jobRoots()[0]?.blocks)).toContain(`Drafted from ${backlink}`);
    await h.slack.dump('slack-view-out/insights-draft.json');
  });

  it('starts one job per gap: a second form is told, and starts nothing; another gap is its own', async () => {
    const report = await posted();
    const [rotate, other] = [gapId(report, isRotate), gapId(report, (t) => !isRotate(t))];
    await h.choose(report.ts, `draft:${rotate}`);
    await h.choose(report.ts, `draft:${rotate}`, { user: 'U0OTHER' });
    const [first, second] = await eventually(
      () => (h.slack.views.length === 2 ? h.slack.views : undefined),
      'two forms',
    );
    const sent = await h.submitView(first!.view, { draft: { prompt: 'Cover key rotation' } });
    expect(sent.body?.response_action).toBeUndefined();
    await eventually(() => h.api.requestsTo('create')[0], 'the create');
    for (let i = 0; i < 2; i++) {
      const refused = await h.submitView(
        second!.view,
        { draft: { prompt: 'Cover rotation again' } },
        { user: 'U0OTHER' },
      );
      expect(refused.body).toMatchObject({
        response_action: 'errors',
        errors: { draft: expect.stringContaining('This gap was drafted already') },
      });
    }
    // Told where the job is, apart from the form.
    await eventually(
      () =>
        h.slack.ephemerals.find(
          (e) => e.user === 'U0OTHER' && /drafted this gap|started a job/.test(e.text ?? ''),
        ),
      'the link to the job',
    );
    await h.choose(report.ts, `draft:${other}`);
    const third = await eventually(() => h.slack.views[2], 'the third form');
    await h.submitView(third.view, { draft: { prompt: 'Document webhook retries' } });
    await eventually(() => h.api.requestsTo('create').length === 2, 'the second create');
    await sleep(300);
    expect(h.api.requestsTo('create').map((r) => (r.body as { prompt: string }).prompt)).toEqual([
      'Cover key rotation',
      'Document webhook retries',
    ]);
  });

  it('shows a spent agent budget in the form, and the submission starts nothing (budget first)', async () => {
    let store = await h.openStore();
    const now = Date.now();
    const slots: number[] = [];
    for (let i = 0; i < 100; i++) {
      const slot = await store.takeBudgetSlot(
        `agent:${PROJECT}`,
        now - 10 * 60_000 + i,
        3_600_000,
        100,
      );
      if (slot.ok) slots.push(slot.slotId);
    }
    await store.close();
    const report = await posted();
    await h.choose(report.ts, `draft:${gapId(report, isRotate)}`);
    const { view } = await eventually(() => h.slack.views[0], 'views.open');
    const shown = JSON.stringify(view.blocks);
    expect(shown).toContain('none of 100 uses left this hour');
    expect(shown).toContain('\\"rotate api key\\" (');
    const refused = await h.submitView(view, { draft: { prompt: 'Cover key rotation' } });
    expect(refused.body).toMatchObject({
      response_action: 'errors',
      errors: {
        draft: expect.stringMatching(/agent budget .* is used up.*frees at \d\d:\d\d UTC/),
      },
    });
    expect(h.api.requestsTo('create')).toHaveLength(0);
    // Nothing was claimed: once the budget frees, the same form starts the job.
    store = await h.openStore();
    await store.releaseBudgetSlot(slots[0]!);
    await store.close();
    await h.submitView(view, { draft: { prompt: 'Cover key rotation' } });
    await eventually(() => h.api.requestsTo('create')[0], 'the create');
  });

  it('prefills a disliked page with its thumbs down and comments', async () => {
    const report = await posted();
    const page = gapId(report, (t) => t.includes('/guides/authentication|'));
    await h.choose(report.ts, `draft:${page}`);
    const { view } = await eventually(() => h.slack.views[0], 'views.open');
    const shown = JSON.stringify(view.blocks);
    expect(shown).toContain('Improve the docs page /guides/authentication');
    expect(shown).toContain('Their comments with a thumbs down');
  });

  it('answers a menu whose gap is not kept, opening nothing', async () => {
    const report = await posted();
    const msg = h.slack.history(CHANNEL).find((m) => m.ts === report.ts)!;
    msg.blocks = JSON.parse(JSON.stringify(msg.blocks).replace(/"draft:\d+"/, '"draft:99999"'));
    const click = await h.choose(report.ts, 'draft:99999');
    await eventually(() => h.slack.responses.find((r) => r.id === click.responseId), 'the answer');
    expect(
      JSON.stringify(h.slack.responses.find((r) => r.id === click.responseId)?.body),
    ).toContain('out of date');
    expect(h.slack.views).toHaveLength(0);
  });
});

describe('Draft it on a report posted before gaps were kept', () => {
  /** A report of the build before: each button carries its evidence (a seed). */
  async function oldReport(value: string): Promise<string> {
    return h.postAsBot({
      text: 'Docs insights: Nov 1 – Nov 14, 2026 (UTC): 1 content gaps',
      metadata: { event_type: 'docs_insights_report', event_payload: { from: '2026-11-01' } },
      blocks: [
        {
          type: 'section',
          text: { type: 'mrkdwn', text: 'Asked *14 times*' },
          accessory: {
            type: 'button',
            action_id: 'insight_draft_question_0',
            text: { type: 'plain_text', text: 'Draft it' },
            value,
          },
        },
      ],
    });
  }

  it("opens the form from the button's evidence and starts one job per button", async () => {
    const seed = { kind: 'question', index: 0, count: 14, example: 'How do I rotate API keys?' };
    const ts = await oldReport(JSON.stringify(seed));
    await h.click(ts, 'insight_draft_question_0');
    await h.click(ts, 'insight_draft_question_0', { user: 'U0OTHER' });
    const [first, second] = await eventually(
      () => (h.slack.views.length === 2 ? h.slack.views : undefined),
      'two forms',
    );
    expect(JSON.stringify(first!.view.blocks)).toContain('Readers asked 14 times about this');
    await h.submitView(first!.view, { draft: { prompt: 'Cover key rotation' } });
    await eventually(() => h.api.requestsTo('create')[0], 'the create');
    const refused = await h.submitView(
      second!.view,
      { draft: { prompt: 'again' } },
      { user: 'U0OTHER' },
    );
    expect(JSON.stringify(refused.body)).toContain('already started from this insight');
    await sleep(300);
    expect(h.api.requestsTo('create')).toHaveLength(1);
  });

  it('answers a button whose value cannot be read, opening nothing', async () => {
    const ts = await oldReport('{"kind":"nope"}');
    const click = await h.click(ts, 'insight_draft_question_0');
    await eventually(() => h.slack.responses.find((r) => r.id === click.responseId), 'the answer');
    expect(
      JSON.stringify(h.slack.responses.find((r) => r.id === click.responseId)?.body),
    ).toContain('out of date');
    expect(h.slack.views).toHaveLength(0);
    expect(h.logs).toContain('insight_draft.stale');
  });
});
