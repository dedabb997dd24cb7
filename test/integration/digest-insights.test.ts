import { afterEach, describe, expect, it } from 'vitest';
import { digestPeriod } from '../../src/reports/range.ts';
import {
  asBot,
  claimedBy,
  DIGEST,
  digestThread,
  digestTopLevel,
  insightsPostedBy,
  insightsSections as insightsSectionsOf,
  missedAnHourAgo,
  trafficReports,
} from '../helpers/digest.ts';
import type { Harness } from '../helpers/harness.ts';
import { eventually, sleep } from '../helpers/net.ts';
import { isCsv, isDetails, listedGaps } from '../helpers/reports.ts';

/** The weekly digest's insights section: its own part of the once-per-period guarantee. */

let h: Harness;
afterEach(async () => {
  await h.close();
});

const insightsSections = () => insightsSectionsOf(h);
const INSIGHT_KINDS = ['searches', 'assistant', 'feedback', 'feedbackByPage'] as const;
const insightRequests = () => INSIGHT_KINDS.flatMap((k) => h.api.requestsTo(k));

describe('weekly digest: insights section', () => {
  it('posts only the insights section when a dead replica posted the traffic report', async () => {
    let missed: Date;
    ({ h, missed } = await missedAnHourAgo());
    const { key } = digestPeriod(missed, 'UTC');
    await claimedBy(h, 'dead-replica', key, Date.now() - 3_600_000);
    const headline = await asBot(h).chat.postMessage({
      channel: DIGEST,
      text: 'Weekly docs traffic',
      metadata: { event_type: 'docs_traffic_report', event_payload: { file_key: `digest-${key}` } },
    });
    await h.start();
    await eventually(() => h.logs.includes('digest.posted'), 'the digest run');
    expect(insightsSections()).toHaveLength(1);
    expect(trafficReports(h)).toHaveLength(1);
    // In the thread of the report found in the channel, not beside it.
    expect(digestTopLevel(h)).toHaveLength(1);
    expect(digestThread(h, headline.ts!)).toEqual(insightsSections());
    // The traffic report was recognised, not rebuilt: not one visitors request.
    expect(h.api.requestsTo('visitors')).toHaveLength(0);
    expect(h.logs).toMatch(/"part":"traffic".*"digest\.part_in_channel"/);
    await h.stopBot();
    await h.start();
    await sleep(1_000);
    expect(insightsSections()).toHaveLength(1);
  });

  it('does not repeat an insights section a run posted in the channel, not knowing the thread', async () => {
    let missed: Date;
    ({ h, missed } = await missedAnHourAgo());
    const { key } = digestPeriod(missed, 'UTC');
    await claimedBy(h, 'dead-replica', key, Date.now() - 3_600_000);
    // The dead replica's chart was never shown to it, so it posted the section beside it.
    const slack = asBot(h);
    await slack.filesUploadV2({
      channel_id: DIGEST,
      initial_comment: 'Weekly docs traffic',
      file_uploads: [{ file: Buffer.from('png'), filename: `docs-traffic-digest-${key}.png` }],
    });
    await insightsPostedBy(slack, key);
    await h.start();
    await eventually(() => h.logs.includes('digest.already_in_channel'), 'the channel check');
    expect(insightsSections()).toHaveLength(1);
    expect(trafficReports(h)).toHaveLength(1);
  });

  it('retries a failed insights section alone: one traffic report, one section', async () => {
    ({ h } = await missedAnHourAgo());
    h.api.inject('searches', { status: 503 }, 3); // the first build fails after its retries
    await h.start({ digest: { staleClaimMs: 500, retryMs: 500 } });
    await eventually(() => insightsSections().length === 1, 'the retried section', 10_000);
    expect(h.logs).toMatch(/"part":"traffic".*"digest\.part_posted"/);
    expect(h.logs).toContain('digest.failed');
    expect(h.logs).toMatch(/"part":"traffic".*"digest\.part_in_channel"/);
    await sleep(1_000);
    expect(digestTopLevel(h)).toHaveLength(1);
    expect(trafficReports(h)).toHaveLength(1);
    expect(insightsSections()).toHaveLength(1);
    // In the traffic report's thread, under its details and CSV, each once.
    const replies = digestThread(h, trafficReports(h)[0]!.ts);
    expect(replies).toHaveLength(3);
    expect(isDetails(replies[0]!)).toBe(true);
    expect(isCsv(replies[1]!)).toBe(true);
    expect(replies[2]).toEqual(insightsSections()[0]);
  });

  it('says why in its place when the API refuses insights for good, and does not retry', async () => {
    ({ h } = await missedAnHourAgo());
    h.api.inject('searches', { status: 403 }, 1_000);
    await h.start({ digest: { staleClaimMs: 500, retryMs: 500 } });
    await eventually(() => h.logs.includes('digest.posted'), 'the digest run');
    const [note] = insightsSections();
    expect(note?.text).toContain('Weekly docs insights could not be built');
    expect(note?.text).toContain('refused');
    expect(note?.blocks ?? []).toHaveLength(0);
    expect(h.logs).toContain('digest.insights_unavailable');
    const sent = insightRequests().length;
    await sleep(1_500);
    expect(insightRequests()).toHaveLength(sent);
    expect(trafficReports(h)).toHaveLength(1);
    expect(insightsSections()).toHaveLength(1);
    expect(digestTopLevel(h)).toHaveLength(1);
    expect(note?.thread_ts).toBe(trafficReports(h)[0]?.ts);
  });

  it("says in the report's thread what it could not post once it gives up, and only once", async () => {
    let missed: Date;
    ({ h, missed } = await missedAnHourAgo());
    h.api.inject('searches', { status: 503 }, 10_000); // insights never come back
    // The catch-up window ends a few seconds from now, not in 24 h (the cron fires on the minute).
    const catchUpMs = Date.now() - Math.floor(missed.getTime() / 60_000) * 60_000 + 2_500;
    await h.start({ digest: { staleClaimMs: 300, retryMs: 300, catchUpMs } });
    const notice = await eventually(
      () => h.slack.history(DIGEST).find((m) => m.text?.includes('is incomplete')),
      'the notice',
      10_000,
    );
    expect(notice.text).toContain('I could not post the insights section in 24 hours of tries');
    expect(notice.text).toContain('answered 503');
    expect(notice.text).toContain('`/insights`');
    expect(h.logs).toContain('digest.given_up');
    await sleep(1_000);
    const notices = h.slack.history(DIGEST).filter((m) => m.text?.includes('is incomplete'));
    expect(notices).toHaveLength(1);
    expect(trafficReports(h)).toHaveLength(1);
    // Where the insights section would be: in the traffic report's thread.
    expect(notice.thread_ts).toBe(trafficReports(h)[0]?.ts);
    expect(digestTopLevel(h)).toHaveLength(1);
    expect(insightsSections()).toHaveLength(0);
  });

  it('turns a gap into one agent job in the digest channel', async () => {
    ({ h } = await missedAnHourAgo());
    await h.start();
    const [section] = await eventually(
      () => (insightsSections().length ? insightsSections() : undefined),
      'the section',
      10_000,
    );
    const [gap] = listedGaps(section);
    await h.choose(section!.ts, `draft:${gap!.id}`, { channel: DIGEST });
    const { view } = await eventually(() => h.slack.views[0], 'views.open');
    expect(JSON.stringify(view.blocks)).toContain('Asked the docs assistant 7 times');
    const prompt = 'Add a page on rotating API keys';
    await h.submitView(view, { draft: { prompt } });
    await h.submitView(view, { draft: { prompt } }); // Slack sent it twice
    const create = await eventually(() => h.api.requestsTo('create')[0], 'the create');
    expect(create.body).toMatchObject({ prompt });
    const root = await eventually(
      () => h.slack.history(DIGEST).find((m) => m.text?.includes('docs agent job')),
      'the root in the digest channel',
    );
    expect(root.text).toContain(prompt);
    await eventually(() => h.logs.includes('insight_draft.duplicate'), 'the duplicate seen');
    expect(h.api.requestsTo('create')).toHaveLength(1);
  });
});
