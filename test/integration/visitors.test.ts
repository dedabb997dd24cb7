import { PNG } from 'pngjs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CHART_HEIGHT, CHART_WIDTH } from '../../src/reports/chart.ts';
import { CHANNEL, Harness } from '../helpers/harness.ts';
import { eventually } from '../helpers/net.ts';
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

const fileMessages = () => h.slack.history(CHANNEL).filter((m) => m.files?.length);
const reportMessages = () =>
  h.slack.history(CHANNEL).filter((m) => m.metadata?.event_type === 'docs_traffic_report');

describe('/visitors', () => {
  it('posts the report with a text fallback, then its chart and CSV through files upload v2', async () => {
    const ack = await h.command('2026-11-01 2026-11-07', { command: '/visitors' });
    expect(ack.status).toBe(200);
    expect(ack.body).toBeNull(); // acked empty; the report follows
    const [files] = await eventually(
      () => (fileMessages().length ? fileMessages() : undefined),
      'chart and CSV',
      10_000,
    );
    const report = reportMessages()[0]!;
    expect(report.text).toBe(
      `Docs traffic: Nov 1 – Nov 7, 2026 (UTC): ${h.api.truth('2026-11-01', '2026-11-08').totals.total.toLocaleString('en-US')} unique visitors (${h.api.truth('2026-11-01', '2026-11-08').totals.human.toLocaleString('en-US')} human, ${h.api.truth('2026-11-01', '2026-11-08').totals.ai.toLocaleString('en-US')} AI).`,
    );
    expect(slackLimitProblems(report)).toEqual([]);
    const blocks = JSON.stringify(report.blocks);
    expect(blocks).toContain('Docs traffic: Nov 1 – Nov 7, 2026');
    expect(blocks).toContain('Top pages');
    expect(blocks).toContain('midnight to midnight, UTC time');
    expect(h.slack.callsTo('chat.postMessage')[0]?.args).toMatchObject({ text: report.text });

    expect(h.slack.callsTo('files.getUploadURLExternal')).toHaveLength(2);
    const complete = h.slack.callsTo('files.completeUploadExternal');
    expect(complete).toHaveLength(1);
    expect(complete[0]?.args).toMatchObject({ channel_id: CHANNEL });
    expect(files?.text).toContain(
      'Chart and every page scanned: Docs traffic, Nov 1 – Nov 7, 2026',
    );
    const [png, csv] = [...h.slack.files.values()];
    // Named by the last day included, as the title shows it (not the exclusive end).
    expect(png?.name).toMatch(/^docs-traffic-2026-11-01_2026-11-07-\d+\.png$/);
    expect(csv?.name).toMatch(/^docs-traffic-2026-11-01_2026-11-07-\d+\.csv$/);
    const image = PNG.sync.read(png!.bytes);
    expect([image.width, image.height]).toEqual([CHART_WIDTH, CHART_HEIGHT]);
    const lines = csv!.bytes.toString('utf8').trim().split('\r\n');
    expect(lines[0]).toBe('path,human,ai,total,previous_total');
    expect(lines.length - 1).toBe(h.api.truth('2026-11-01', '2026-11-08').rows.length);
    await h.slack.dump('slack-view-out/visitors.json');
  });

  it.each(['invalid_blocks', 'msg_blocks_too_long', 'invalid_arguments', 'internal_error'])(
    'posts the report as a plain message when Slack refuses its blocks (%s)',
    async (error) => {
      h.slack.failNext('chat.postMessage', { error });
      await h.command('2026-11-01 2026-11-07', { command: '/visitors' });
      await eventually(() => fileMessages().length === 1, 'chart and CSV', 10_000);
      const [report, ...others] = reportMessages();
      expect(others).toHaveLength(0);
      expect(report?.blocks ?? []).toHaveLength(0);
      expect(report?.text).toContain('*Docs traffic: Nov 1 – Nov 7, 2026* (days in UTC time)');
      expect(report?.text).toContain('*Top pages*\n1. ');
      expect(report?.text).toContain('*Biggest movers*');
      expect(h.logs).toContain('report.blocks_refused');
      if (error === 'invalid_blocks') await h.slack.dump('slack-view-out/visitors-plain.json');
    },
  );

  it('keeps the posted report when only its chart and CSV fail to upload', async () => {
    h.slack.failNext('files.completeUploadExternal', { error: 'internal_error' });
    const ack = await h.command('2026-11-01 2026-11-07', { command: '/visitors' });
    await eventually(() => h.logs.includes('report.files_failed'), 'the files failure', 10_000);
    await eventually(() => h.logs.includes('visitors.posted'), 'the report counted as posted');
    expect(reportMessages()).toHaveLength(1);
    expect(reportMessages()[0]?.blocks?.length).toBeGreaterThan(0);
    expect(h.slack.responses.filter((r) => r.id === ack.responseUrl.split('/').pop())).toEqual([]);
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
    await eventually(() => fileMessages().length === 1, 'chart and CSV', 10_000);
    const [report] = reportMessages();
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
    await eventually(() => fileMessages().length === 1, 'report after the note', 10_000);
    expect(reportMessages()).toHaveLength(1);
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
