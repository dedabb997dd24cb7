import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ROTATE_KEY_QUESTIONS } from '../fakes/analytics-insights-seed.ts';
import { CHANNEL, Harness } from '../helpers/harness.ts';
import { eventually } from '../helpers/net.ts';
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
    const blocks = JSON.stringify(report?.blocks);
    expect(blocks).toContain('Content gaps');
    expect(blocks).toContain('Asked *14 times* and the assistant could not answer');
    expect(ROTATE_KEY_QUESTIONS.some((q) => blocks.includes(`“${q}”`))).toBe(true);
    expect(blocks).toContain('“rotate api key”');
    expect(blocks).toContain('Pages readers disliked');
    expect(blocks).toContain(
      '<https://docs.acme.com/guides/authentication|/guides/authentication>',
    );
    // The seeded comment pings nobody: escaped.
    expect(blocks).toContain('confusing &amp; wrong &lt;!channel&gt;');
    expect(blocks).not.toContain('<!channel>');
    expect(blocks).toContain('Top searches');
    expect(blocks).toContain('most clicked: <https://docs.acme.com/quickstart|/quickstart>');
    expect(blocks).toContain('share at least 60% of their words');
    expect(h.logs).toContain('insights.posted');
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
