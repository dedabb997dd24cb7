import { WebClient } from '@slack/web-api';
import { SINGLE_WORKSPACE as WS } from '../../src/store/scope.ts';
import { Harness, SECRETS } from './harness.ts';
import { reportHeadlines, threadOf, topLevel } from './reports.ts';

/** The digest channel of the digest tests. */
export const DIGEST = 'C0DIGEST';

/** A cron for a fixed UTC instant each year (minute hour day month). */
export function cronAt(at: Date): string {
  return `${at.getUTCMinutes()} ${at.getUTCHours()} ${at.getUTCDate()} ${at.getUTCMonth() + 1} *`;
}

/** A harness whose digest was due an hour ago (so it is caught up at start). */
export async function missedAnHourAgo(
  env: Record<string, string> = {},
): Promise<{ h: Harness; missed: Date }> {
  const missed = new Date(Date.now() - 3_600_000);
  const h = await Harness.create({
    env: { DIGEST_CHANNEL: DIGEST, DIGEST_CRON: cronAt(missed), ...env },
  });
  return { h, missed };
}

/** Another process's claim on the period, taken at `at`, left behind in the database. */
export async function claimedBy(h: Harness, owner: string, key: string, at: number) {
  const store = await h.openStore();
  await store.claimDigest(WS, DIGEST, key, owner, at, 60_000);
  await store.close();
}

/** A client that posts as the bot straight to the fake Slack: what a dead replica did. */
export const asBot = (h: Harness) => new WebClient(SECRETS.botToken, { slackApiUrl: h.slack.url });

/**
 * The insights section a dead replica posted for the period before it died: in the traffic
 * report's thread `threadTs`, or in the channel (where a report whose thread was unknown
 * left it).
 */
export async function insightsPostedBy(
  slack: WebClient,
  key: string,
  threadTs?: string,
): Promise<void> {
  await slack.chat.postMessage({
    channel: DIGEST,
    ...(threadTs ? { thread_ts: threadTs } : {}),
    text: 'Weekly docs insights',
    metadata: { event_type: 'docs_insights_report', event_payload: { key: `digest-${key}` } },
  });
}

/** What people see in the digest channel itself: one message per digest. */
export const digestTopLevel = (h: Harness) => topLevel(h.slack, DIGEST);
/** The traffic report headlines of the digest channel (the rest is in each one's thread). */
export const trafficReports = (h: Harness) => reportHeadlines(h.slack, DIGEST);
/** The replies under a message of the digest channel. */
export const digestThread = (h: Harness, ts: string) => threadOf(h.slack, DIGEST, ts);
/** The insights sections (or the notes in their place), wherever they are. */
export const insightsSections = (h: Harness) =>
  h.slack.history(DIGEST).filter((m) => m.metadata?.event_type === 'docs_insights_report');
