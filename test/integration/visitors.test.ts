import { PNG } from 'pngjs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CHART_HEIGHT, CHART_WIDTH } from '../../src/reports/chart.ts';
import { CHANNEL, Harness } from '../helpers/harness.ts';
import { eventually } from '../helpers/net.ts';
import { isCsv, isDetails, reportHeadlines, threadOf, topLevel } from '../helpers/reports.ts';
import { slackLimitProblems } from '../helpers/slack-limits.ts';

let h: Harness;
beforeEach(async () => {
  h = await Harness.create({ mode: 'http' });
  h.api.setSite({ paths: 1_300 });
  await h.start();
});
afterEach(async () => {
  await h.close();
});

/** What people see in the channel itself: one message per report. */
const channelMessages = () => topLevel(h.slack, CHANNEL);
const headlines = () => reportHeadlines(h.slack, CHANNEL);
const thread = (ts: string) => threadOf(h.slack, CHANNEL, ts);

/** The report once it is whole: its headline, and its thread up to the CSV (or its failure). */
async function postedReport() {
  return eventually(
    () => {
      const [headline] = headlines();
      if (!headline) return undefined;
      const replies = thread(headline.ts);
      const done = replies.some(isCsv) || h.logs.includes('report.csv_failed');
      return done ? { headline, replies, details: replies.find(isDetails) } : undefined;
    },
    'the report and its thread',
    10_000,
  );
}

describe('/visitors', () => {
  it('posts one message with the chart and the totals, and the details and CSV in its thread', async () => {
    const ack = await h.command('2026-11-01 2026-11-07', { command: '/visitors' });
    expect(ack.status).toBe(200);
    expect(ack.body).toBeNull(); // acked empty; the report follows
    const { headline, replies, details } = await postedReport();
    // One message in the channel: the chart, with the totals as its comment (what a
    // notification shows); the rest is in its thread.
    expect(channelMessages()).toEqual([headline]);
    const { totals } = h.api.truth('2026-11-01', '2026-11-08');
    const n = (v: number) => v.toLocaleString('en-US');
    const lines = headline.text.split('\n');
    expect(lines[0]).toBe('*Docs traffic: Nov 1 – Nov 7, 2026* (UTC)');
    expect(lines[1]).toContain(`Humans *${n(totals.human)}*`);
    expect(lines[2]).toContain(`AI agents *${n(totals.ai)}*`);
    expect(lines[3]).toContain(`All visitors *${n(totals.total)}*`);
    expect(lines[4]).toContain('in the thread');

    // In the thread: top pages and movers with a text fallback, then the CSV.
    expect(replies).toHaveLength(2);
    expect(replies[0]).toBe(details);
    expect(details?.text).toBe(
      `Top pages and biggest movers: Docs traffic: Nov 1 – Nov 7, 2026 (UTC): ${n(totals.total)} unique visitors (${n(totals.human)} human, ${n(totals.ai)} AI).`,
    );
    expect(slackLimitProblems(details!)).toEqual([]);
    const blocks = JSON.stringify(details?.blocks);
    expect(blocks).toContain('Top pages');
    expect(blocks).toContain('midnight to midnight, UTC time');
    expect(h.slack.callsTo('chat.postMessage')[0]?.args).toMatchObject({
      text: details?.text,
      thread_ts: headline.ts,
    });

    expect(h.slack.callsTo('files.getUploadURLExternal')).toHaveLength(2);
    const complete = h.slack.callsTo('files.completeUploadExternal');
    expect(complete).toHaveLength(2);
    expect(complete[0]?.args).toMatchObject({
      channel_id: CHANNEL,
      initial_comment: headline.text,
    });
    expect(complete[0]?.args.thread_ts).toBeUndefined();
    expect(complete[1]?.args).toMatchObject({ channel_id: CHANNEL, thread_ts: headline.ts });
    expect(replies[1]?.text).toBe('Every page scanned, Nov 1 – Nov 7, 2026 (CSV).');
    expect(headline.files?.map((f) => f.name)).toEqual([[...h.slack.files.values()][0]?.name]);
    const [png, csv] = [...h.slack.files.values()];
    // Named by the last day included, as the title shows it (not the exclusive end).
    expect(png?.name).toMatch(/^docs-traffic-2026-11-01_2026-11-07-\d+\.png$/);
    expect(csv?.name).toMatch(/^docs-traffic-2026-11-01_2026-11-07-\d+\.csv$/);
    const image = PNG.sync.read(png!.bytes);
    expect([image.width, image.height]).toEqual([CHART_WIDTH, CHART_HEIGHT]);
    const rows = csv!.bytes.toString('utf8').trim().split('\r\n');
    expect(rows[0]).toBe('path,human,ai,total,previous_total');
    expect(rows.length - 1).toBe(h.api.truth('2026-11-01', '2026-11-08').rows.length);
    await h.slack.dump('slack-view-out/visitors.json');
  });

  it.each(['invalid_blocks', 'msg_blocks_too_long', 'invalid_arguments', 'internal_error'])(
    'posts the details as a plain reply when Slack refuses their blocks (%s)',
    async (error) => {
      h.slack.failNext('chat.postMessage', { error });
      await h.command('2026-11-01 2026-11-07', { command: '/visitors' });
      const { headline, replies, details: report } = await postedReport();
      expect(channelMessages()).toEqual([headline]);
      expect(replies.filter(isDetails)).toHaveLength(1);
      expect(replies.filter(isCsv)).toHaveLength(1);
      expect(report?.blocks ?? []).toHaveLength(0);
      expect(report?.text).toContain('*Docs traffic: Nov 1 – Nov 7, 2026* (days in UTC time)');
      expect(report?.text).toContain('*Top pages*\n1. ');
      expect(report?.text).toContain('*Biggest movers*');
      expect(h.logs).toContain('report.blocks_refused');
      if (error === 'invalid_blocks') await h.slack.dump('slack-view-out/visitors-plain.json');
    },
  );

  it.each([
    ['the chart', 1],
    ['the chart and the CSV', 2],
  ])(
    'keeps the report one headline and its thread when %s cannot be uploaded',
    async (_what, times) => {
      h.slack.failNext('files.completeUploadExternal', { error: 'internal_error' }, times);
      const ack = await h.command('2026-11-01 2026-11-07', { command: '/visitors' });
      await eventually(() => h.logs.includes('report.files_failed'), 'the files failure', 10_000);
      await eventually(() => h.logs.includes('visitors.posted'), 'the report counted as posted');
      // The numbers without the chart: the headline as a plain message, marked as the report.
      const [headline, ...others] = channelMessages();
      expect(others).toHaveLength(0);
      expect(headline?.files ?? []).toHaveLength(0);
      expect(headline?.metadata?.event_type).toBe('docs_traffic_report');
      expect(headline?.text).toContain('*Docs traffic: Nov 1 – Nov 7, 2026* (UTC)');
      const replies = thread(headline!.ts);
      expect(replies.filter(isDetails)).toHaveLength(1);
      expect(replies.find(isDetails)?.blocks?.length).toBeGreaterThan(0);
      expect(replies.filter(isCsv)).toHaveLength(times === 1 ? 1 : 0);
      if (times === 2) expect(h.logs).toContain('report.csv_failed');
      expect(h.slack.responses.filter((r) => r.id === ack.responseUrl.split('/').pop())).toEqual(
        [],
      );
    },
  );

  it('threads the details under the chart when Slack shows the chart late', async () => {
    h.slack.delayShares(1_500);
    await h.command('2026-11-01 2026-11-07', { command: '/visitors' });
    const { headline, replies } = await postedReport();
    expect(channelMessages()).toEqual([headline]);
    expect(headline.files).toHaveLength(1);
    expect(replies.filter(isDetails)).toHaveLength(1);
    expect(h.slack.callsTo('conversations.history').length).toBeGreaterThan(1); // looked again
    expect(h.logs).not.toContain('report.thread_unknown');
  });

  it('posts the details in the channel, nothing lost, when Slack never shows the chart', async () => {
    h.slack.delayShares(15_000); // longer than the bot looks for it
    await h.command('2026-11-01 2026-11-07', { command: '/visitors' });
    await eventually(() => h.logs.includes('visitors.posted'), 'the report posted', 15_000);
    expect(h.logs).toContain('report.thread_unknown');
    // Without the chart's ts there is no thread: the details and CSV go in the channel.
    expect(channelMessages().filter(isDetails)).toHaveLength(1);
    const [, csv] = h.slack.callsTo('files.completeUploadExternal');
    expect(csv?.args).toMatchObject({ channel_id: CHANNEL });
    expect(csv?.args.thread_ts).toBeUndefined();
    expect(h.slack.orphans).toEqual([]);
  });

  it('posts no second headline when the chart upload took effect but its answer was lost', async () => {
    h.slack.failNext('files.completeUploadExternal', { status: 500, tookEffect: true });
    await h.command('2026-11-01 2026-11-07', { command: '/visitors' });
    await eventually(() => h.logs.includes('visitors.posted'), 'the report posted', 10_000);
    expect(h.logs).toContain('report.files_failed');
    const { headline, replies } = await postedReport();
    expect(channelMessages()).toEqual([headline]);
    expect(headline.files).toHaveLength(1); // the chart that was shared after all
    expect(replies.filter(isDetails)).toHaveLength(1);
  });

  it('links every page path to DOCS_BASE_URL, escaped, within Slack limits for &-heavy paths', async () => {
    await h.close();
    h = await Harness.create({ mode: 'http', env: { DOCS_BASE_URL: 'https://docs.acme.com/' } });
    const odd = [
      ...Array.from({ length: 9 }, (_, i) => `/api/${i}/${'&'.repeat(250)}?q=<b>`),
      '/x|<https://evil.example|click> <!channel>',
    ];
    h.api.setSite({ paths: 1_300, popularPaths: odd });
    await h.start();
    await h.command('2026-11-01 2026-11-07', { command: '/visitors' });
    const { details: report } = await postedReport();
    expect(report?.blocks?.length).toBeGreaterThan(0); // Slack took the blocks
    expect(slackLimitProblems(report!)).toEqual([]);
    const text = JSON.stringify(report?.blocks);
    expect(text).toContain('<https://docs.acme.com/x%7C%3Chttps%3A/');
    expect(text).not.toContain('<https://evil');
    expect(text).not.toContain('<!channel>');
    expect(text).toMatch(/<https:\/\/docs\.acme\.com\/api\/\d\/%26%26%26/);
    const links = text.match(/<https:\/\/docs\.acme\.com\//g) ?? [];
    expect(links.length).toBeGreaterThanOrEqual(10); // every top page, and the movers
    await h.slack.dump('slack-view-out/visitors-links.json');
  });

  it.each([
    ['yesterday', "don't understand"],
    ['2026-11-07 2026-11-01', 'before'],
    ['2026-02-30 2026-03-01', 'not a real date'],
    ['2026-01-01 2026-06-01', '90 days'],
    ['2030-01-01 2030-01-02', 'future'],
  ])(
    'answers "/visitors %s" with what is wrong and the accepted forms, fetching nothing',
    async (text, problem) => {
      const ack = await h.command(text, { command: '/visitors' });
      expect(ack.body).toMatchObject({ response_type: 'ephemeral' });
      const reply = String(ack.body?.text);
      expect(reply.toLowerCase()).toContain(problem);
      expect(reply).toContain('/visitors 30d');
      expect(h.api.requestsTo('visitors')).toHaveLength(0);
    },
  );

  it('tells the user plainly when the API fails, and posts nothing', async () => {
    h.api.inject('visitors', {
      status: 400,
      details: [{ path: ['dateFrom'], message: 'Invalid date' }],
    });
    const ack = await h.command('7d', { command: '/visitors' });
    const reply = await h.slack.waitForResponse(
      (r) => r.id === ack.responseUrl.split('/').pop(),
      10_000,
    );
    expect(reply.body).toMatchObject({ response_type: 'ephemeral' });
    expect(JSON.stringify(reply.body)).toContain('Invalid date');
    expect(h.slack.callsTo('files.completeUploadExternal')).toHaveLength(0);
    expect(h.logs).toContain('visitors.failed');
  });

  it('sends a short "working on it" note when the report takes a while', async () => {
    h.api.inject('visitors', { slowMs: 1_500 }, 3); // each under the client's timeout
    const ack = await h.command('7d', { command: '/visitors' });
    const note = await h.slack.waitForResponse(
      (r) => r.id === ack.responseUrl.split('/').pop(),
      5_000,
    );
    expect(JSON.stringify(note.body)).toContain('Working on your traffic report');
    const { headline } = await postedReport();
    expect(channelMessages()).toEqual([headline]);
  });

  it('says when the analytics budget refreshes instead of failing', async () => {
    const store = await h.openStore();
    const now = Date.now();
    for (let i = 0; i < 100; i++)
      await store.takeBudgetSlot('analytics', now - 20 * 60_000 + i, 3_600_000, 100);
    await store.close();
    const ack = await h.command('7d', { command: '/visitors' });
    const reply = await h.slack.waitForResponse(
      (r) => r.id === ack.responseUrl.split('/').pop(),
      5_000,
    );
    const refreshes = new Date(now - 20 * 60_000 + 3_600_000).toISOString().slice(11, 16);
    expect(JSON.stringify(reply.body)).toContain(`refreshes at ${refreshes} UTC`);
    expect(h.api.requestsTo('visitors')).toHaveLength(0);
  });

  it('tells the user to invite the bot when it is not in the channel', async () => {
    h.slack.removeBot(CHANNEL);
    const ack = await h.command('7d', { command: '/visitors' });
    const reply = await h.slack.waitForResponse(
      (r) => r.id === ack.responseUrl.split('/').pop(),
      10_000,
    );
    // By the name auth.test gives the bot, not a hard-coded one.
    expect(JSON.stringify(reply.body)).toContain('/invite @docsbot');
  });
});
