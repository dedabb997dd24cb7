import { Writable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { type Bot, type BotOptions, startBot } from '../../src/app/bot.ts';
import { loadConfig } from '../../src/config/config.ts';
import { digestPeriod, formatRange } from '../../src/reports/range.ts';
import {
  asBot,
  claimedBy as claimedByIn,
  cronAt,
  DIGEST,
  digestThread,
  digestTopLevel,
  insightsPostedBy,
  insightsSections as insightsSectionsOf,
  missedAnHourAgo as missedHarness,
  trafficReports,
} from '../helpers/digest.ts';
import { Harness } from '../helpers/harness.ts';
import { eventually, freePort, sleep } from '../helpers/net.ts';
import { isCsv, isDetails } from '../helpers/reports.ts';
import { slackLimitProblems } from '../helpers/slack-limits.ts';

let h: Harness;
const extra: Bot[] = [];
const extraLogs: string[] = [];

afterEach(async () => {
  for (const b of extra.splice(0)) await b.stop();
  await h.close();
});

/** A second instance of the bot on the same database, as another replica would be. */
async function secondInstance(opts: Pick<BotOptions, 'digest'> = {}): Promise<Bot> {
  const r = loadConfig({ ...h.env, PORT: String(await freePort()) });
  if (!r.ok) throw new Error(r.problems.join('\n'));
  const bot = await startBot(r.config, {
    ...opts,
    logDestination: new Writable({
      write(chunk, _e, cb) {
        extraLogs.push(String(chunk));
        cb();
      },
    }),
  });
  extra.push(bot);
  return bot;
}

/** A harness whose digest was due an hour ago (so it is caught up at start). */
async function missedAnHourAgo(): Promise<Date> {
  const made = await missedHarness();
  h = made.h;
  return made.missed;
}
const claimedBy = (owner: string, key: string, at: number) => claimedByIn(h, owner, key, at);

/** The digests in the channel: each is one top-level message, the traffic report's headline. */
const digests = () => trafficReports(h);
const insightsSections = () => insightsSectionsOf(h);

describe('weekly digest', () => {
  it('posts once per period with two instances on one database, and not again after a restart', async () => {
    // Every second: both instances fire again and again; the claim lets one post, once.
    h = await Harness.create({ env: { DIGEST_CHANNEL: DIGEST, DIGEST_CRON: '* * * * * *' } });
    await h.start();
    await secondInstance();
    await sleep(3_000);
    // One message in the channel: the chart, with the headline as its comment.
    expect(digestTopLevel(h)).toHaveLength(1);
    expect(digests()).toHaveLength(1);
    const headline = digests()[0]!;
    const { range, key } = digestPeriod(new Date(), 'UTC');
    expect(headline.text).toContain(`Weekly docs traffic: ${formatRange(range)}`);
    expect(headline.files?.map((f) => f.name)).toEqual([`docs-traffic-digest-${key}.png`]);
    expect(`${h.logs}${extraLogs.join('')}`).toMatch(/digest\.(claimed_elsewhere|already_posted)/);
    // In its thread, in this order: top pages and movers, the CSV, the insights section.
    const replies = digestThread(h, headline.ts);
    expect(replies).toHaveLength(3);
    const [details, csv, section] = replies;
    expect(isDetails(details!)).toBe(true);
    expect(details?.text).toContain(`Weekly docs traffic: ${formatRange(range)}`);
    expect(JSON.stringify(details?.blocks)).toContain('Top pages');
    expect(slackLimitProblems(details!)).toEqual([]);
    expect(isCsv(csv!)).toBe(true);
    expect(insightsSections()).toEqual([section]);
    expect(section?.text).toContain(`Weekly docs insights: ${formatRange(range)}`);
    expect(slackLimitProblems(section!)).toEqual([]);
    const shown = JSON.stringify(section?.blocks);
    expect(shown).toContain('Content gaps');
    expect(shown).toContain('Pages readers disliked');
    // Each gap and disliked page with its menu (Draft it, evidence, Dismiss).
    expect(shown).toContain('"action_id":"insight_gap"');
    expect(shown).toMatch(/"value":"draft:\d+"/);
    expect(shown).not.toContain('Top searches');

    await h.stopBot();
    for (const b of extra.splice(0)) await b.stop();
    await h.start();
    await sleep(1_500);
    expect(digestTopLevel(h)).toHaveLength(1);
    expect(digestThread(h, headline.ts)).toHaveLength(3);
  });

  it('catches up once when started within 24 h of a missed run', async () => {
    await missedAnHourAgo();
    await h.start();
    await sleep(1_500);
    expect(digests()).toHaveLength(1);
    expect(digestTopLevel(h)).toHaveLength(1);
    expect(h.logs).toContain('digest.catch_up');
    await h.stopBot();
    await h.start();
    await sleep(1_000);
    expect(digests()).toHaveLength(1);
    expect(digestTopLevel(h)).toHaveLength(1);
  });

  it('logs the skip when the missed run is older than 24 h', async () => {
    h = await Harness.create({
      env: { DIGEST_CHANNEL: DIGEST, DIGEST_CRON: cronAt(new Date(Date.now() - 3 * 86_400_000)) },
    });
    await h.start();
    await sleep(800);
    expect(digestTopLevel(h)).toHaveLength(0);
    expect(h.logs).toContain('digest.catch_up_skipped');
  });

  it('retries a run whose claim was still fresh, once it goes stale, and posts once', async () => {
    const missed = await missedAnHourAgo();
    const { key } = digestPeriod(missed, 'UTC');
    // This very bot, killed mid-build a moment ago, left a fresh claim behind.
    await claimedBy('previous-process', key, Date.now());
    await h.start({ digest: { staleClaimMs: 1_000, retryMs: 500 } });
    await eventually(() => digests().length === 1, 'the retried digest', 8_000);
    expect(h.logs).toContain('digest.claimed_elsewhere');
    await sleep(1_500);
    expect(digests()).toHaveLength(1);
    expect(digestTopLevel(h)).toHaveLength(1);
  });

  it('keeps a slow build its own while it beats: a second instance does not take it over', async () => {
    await missedAnHourAgo();
    h.api.setLatency('visitors', 150); // the API is struggling: the build takes seconds
    const fast = { digest: { staleClaimMs: 300, retryMs: 300 } };
    await h.start(fast);
    await eventually(() => h.api.requestsTo('visitors').length > 0, 'the build under way');
    await sleep(600); // twice the stale time: only the heartbeat keeps the claim fresh
    await secondInstance(fast);
    await eventually(() => digests().length === 1, 'the digest', 15_000);
    await sleep(1_000); // the second instance's retry finds it posted
    expect(digests()).toHaveLength(1);
    expect(extraLogs.join('')).toContain('digest.claimed_elsewhere');
  });

  it('retries a run that failed on an API error, and posts once', async () => {
    await missedAnHourAgo();
    h.api.inject('visitors', { status: 503 }, 3); // the first build fails after its retries
    await h.start({ digest: { staleClaimMs: 500, retryMs: 500 } });
    await eventually(() => digests().length === 1, 'the retried digest', 8_000);
    expect(h.logs).toContain('digest.failed');
    expect(h.logs).toContain('digest.retry_scheduled');
    await sleep(1_000);
    expect(digests()).toHaveLength(1);
    expect(digestTopLevel(h)).toHaveLength(1);
    expect(digestThread(h, digests()[0]!.ts)).toHaveLength(3); // details, CSV, insights
  });

  it('recognises a digest posted the fallback way (a message marked with its key)', async () => {
    const missed = await missedAnHourAgo();
    const { key } = digestPeriod(missed, 'UTC');
    await claimedBy('dead-replica', key, Date.now() - 3_600_000);
    const slack = asBot(h);
    const headline = await slack.chat.postMessage({
      channel: DIGEST,
      text: 'Weekly docs traffic',
      metadata: { event_type: 'docs_traffic_report', event_payload: { file_key: `digest-${key}` } },
    });
    await insightsPostedBy(slack, key, headline.ts);
    await h.start();
    await eventually(() => h.logs.includes('digest.already_in_channel'), 'the channel check');
    expect(h.slack.history(DIGEST)).toHaveLength(2);
    expect(digestTopLevel(h)).toHaveLength(1);
  });

  it('does not post again for a stale claim whose digest already reached the channel', async () => {
    const missed = await missedAnHourAgo();
    const { key } = digestPeriod(missed, 'UTC');
    // A replica claimed the period an hour ago, posted, and died before marking it posted.
    await claimedBy('dead-replica', key, Date.now() - 3_600_000);
    const slack = asBot(h);
    await slack.filesUploadV2({
      channel_id: DIGEST,
      initial_comment: 'Weekly docs traffic',
      file_uploads: [{ file: Buffer.from('png'), filename: `docs-traffic-digest-${key}.png` }],
    });
    const [headline] = digests();
    await insightsPostedBy(slack, key, headline!.ts);
    await h.start();
    await sleep(1_500);
    expect(digests()).toHaveLength(1);
    expect(digestTopLevel(h)).toHaveLength(1);
    expect(digestThread(h, headline!.ts)).toHaveLength(1); // the insights section, not again
    expect(h.logs).toContain('digest.already_in_channel');
    expect(h.slack.callsTo('conversations.history').length).toBeGreaterThanOrEqual(1);
  });
});
