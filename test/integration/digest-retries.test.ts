import { afterEach, describe, expect, it } from 'vitest';
import type { RecordedRequest } from '../fakes/api-emulator.ts';
import { DIGEST, missedAnHourAgo, trafficReports } from '../helpers/digest.ts';
import type { Harness } from '../helpers/harness.ts';
import { eventually, sleep } from '../helpers/net.ts';

/**
 * The digest's insights section when the API keeps failing: retries back off (the base
 * delay, then twice, four times… as long), in the database so that a restart waits as long,
 * each retry asks each page once, and the retries of a day spend at most their allowance of
 * analytics requests, then stop with one notice saying so.
 */

let h: Harness;
afterEach(async () => {
  await h.close();
});

const INSIGHT_KINDS = ['searches', 'assistant', 'feedback', 'feedbackByPage'] as const;
const insightRequests = () =>
  h.api.requests.filter((r) => (INSIGHT_KINDS as readonly unknown[]).includes(r.kind));
const notices = () => h.slack.history(DIGEST).filter((m) => m.text?.includes('is incomplete'));

/** The insights requests in runs: a new run starts after a pause of over half a second. */
function runs(): RecordedRequest[][] {
  const out: RecordedRequest[][] = [];
  for (const r of insightRequests()) {
    const last = out.at(-1)?.at(-1);
    if (last && r.at - last.at < 500) out.at(-1)!.push(r);
    else out.push([r]);
  }
  return out;
}

describe('weekly digest: insights retries', () => {
  it('back off, doubling the wait, and ask each page once', async () => {
    ({ h } = await missedAnHourAgo());
    h.api.inject('searches', { status: 503 }, 10_000);
    // Base delay: the stale claim's 200 ms + 1 s.
    await h.start({ digest: { staleClaimMs: 200, retryMs: 200 } });
    await eventually(() => runs().length >= 3, 'two retries', 10_000);
    const [first, second, third] = runs();
    expect(first).toHaveLength(3); // the first try: the client's own quick retries
    expect(second).toHaveLength(1);
    expect(third).toHaveLength(1);
    const wait1 = second![0]!.at - first!.at(-1)!.at;
    const wait2 = third![0]!.at - second![0]!.at;
    expect(wait1).toBeGreaterThanOrEqual(1_150);
    expect(wait2).toBeGreaterThanOrEqual(2_300);
    expect(wait2).toBeGreaterThan(1.7 * wait1);
    expect(trafficReports(h)).toHaveLength(1);
  });

  it('keep backing off across a restart: the restarted bot waits as long', async () => {
    ({ h } = await missedAnHourAgo());
    h.api.inject('searches', { status: 503 }, 10_000);
    const fast = { digest: { staleClaimMs: 200, retryMs: 3_000 } };
    await h.start(fast);
    await eventually(() => h.logs.includes('digest.failed'), 'the first failure');
    const failedAt = insightRequests().at(-1)!.at;
    await h.stopBot();
    const sent = insightRequests().length;
    await h.start(fast); // catches the run up at once, unless it knows to wait
    await eventually(
      () => h.logs.split('digest.failed')[1]?.includes('digest.backing_off'),
      'the restarted bot backing off',
    );
    await sleep(1_000);
    expect(insightRequests()).toHaveLength(sent);
    await eventually(() => insightRequests().length > sent, 'the retry', 6_000);
    expect(insightRequests()[sent]!.at - failedAt).toBeGreaterThanOrEqual(2_900);
  });

  it('spend at most their daily allowance of requests, then stop and say so once', async () => {
    ({ h } = await missedAnHourAgo());
    // The core's second page fails: each retry spends 2 requests (searches, assistant).
    h.api.inject('assistant', { status: 503 }, 10_000);
    await h.start({ digest: { staleClaimMs: 200, retryMs: 200, retryRequests: 4 } });
    const [notice] = await eventually(
      () => (notices().length ? notices() : undefined),
      'the notice',
      15_000,
    );
    expect(notice?.text).toContain(
      'I could not post the insights section. Its retries used the 4 analytics requests they may spend in a day, so I stopped trying.',
    );
    expect(notice?.thread_ts).toBe(trafficReports(h)[0]?.ts);
    const [first, ...retries] = runs();
    expect(first).toHaveLength(4); // searches, then assistant and its 2 quick retries
    expect(retries.flat().map((r) => r.kind)).toEqual(['searches', 'assistant']);
    const store = await h.openStore();
    expect(await store.budgetUsed(`digest-retry-requests:${DIGEST}`, 0)).toBe(2);
    await store.close();
    const sent = insightRequests().length;
    await sleep(3_000);
    expect(insightRequests()).toHaveLength(sent);
    expect(notices()).toHaveLength(1);
    expect(h.logs).toContain('digest.given_up');
  });
});
