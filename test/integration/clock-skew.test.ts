import { afterEach, describe, expect, it } from 'vitest';
import { Harness, TEST_LEASE_MS } from '../helpers/harness.ts';
import { eventually, sleep } from '../helpers/net.ts';
import { postgresAvailable } from '../helpers/postgres.ts';

/**
 * Two real bots on one PostgreSQL database, the second one's clock 6 s fast: three of the
 * test world's 2 s leases (in production, 0.2 of a 30 s one). Both go by the database's
 * clock (src/clock.ts), so the fast one sees the other's leases and work in progress as the
 * other does.
 */
const FAST_MS = 3 * TEST_LEASE_MS;

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

/** Per job, the spans during which a GET for it was in flight. */
function overlaps(gets: { path: string; at: number; answeredAt?: number | null }[]): string[] {
  const spans = Object.groupBy(gets, (r) => r.path.split('/').at(-1) ?? '');
  return Object.entries(spans)
    .filter(([, list]) => {
      const sorted = [...(list ?? [])].sort((a, b) => a.at - b.at);
      return sorted.some(
        (s, i) => i > 0 && s.at < (sorted[i - 1]?.answeredAt ?? Number.POSITIVE_INFINITY),
      );
    })
    .map(([jobId]) => jobId);
}

describe.skipIf(!postgresAvailable)('replicas whose clocks disagree (PostgreSQL)', () => {
  it('a replica 6 s fast takes over no live lease and tells no reply "may not have arrived"', {
    timeout: 60_000,
  }, async () => {
    h = await Harness.create({ engine: 'postgres' });
    await h.start();
    const replicaLog: string[] = [];
    const { eventsUrl } = await h.startReplica(replicaLog, {
      localClock: () => Date.now() + FAST_MS,
    });
    // Slow answers keep polls and follow-ups in flight, under their leases, for a while.
    h.api.setLatency('get', 400);
    h.api.setLatency('message', 700);
    const n = 6;
    for (let i = 0; i < n; i++) await h.command(`Job ${i}`, i % 2 ? { url: eventsUrl } : {});
    const harness = h;
    const roots = await eventually(() => harness.roots().length === n && harness.roots(), 'roots');
    const jobs = await eventually(
      () => harness.api.createdJobs().length === n && harness.api.createdJobs(),
      'every job',
    );
    // Replies, passed on by the first replica while the fast one's recovery runs.
    for (const r of roots) await h.reply(r.ts, 'Also add a troubleshooting section');
    await eventually(
      () => jobs.every((j) => (harness.api.jobs.get(j.id)?.messages.length ?? 0) >= 2),
      'every follow-up sent',
      20_000,
    );
    await sleep(2 * TEST_LEASE_MS); // recovery passes on both replicas
    for (const [i, job] of jobs.entries())
      h.api.complete(job.id, `https://github.com/acme/docs/pull/${i}`);
    await eventually(
      () => roots.every((r) => harness.botReplies(r.ts).some((m) => m.text.includes('pull/'))),
      'every completion announced',
      20_000,
    );
    await sleep(600); // room for a duplicate to show up

    const logs = h.logs + replicaLog.join('');
    expect(logs).not.toContain('"msg":"reply.uncertain"');
    for (const r of roots) {
      const replies = h.botReplies(r.ts).map((m) => m.text);
      expect(replies.filter((t) => t.includes('pull/'))).toHaveLength(1);
      expect(replies.filter((t) => /cannot tell whether this reply/.test(t))).toEqual([]);
    }
    expect(overlaps(h.api.requestsTo('get'))).toEqual([]);
    expect(replicaLog.join('')).toContain('"msg":"clock.offset"');
  });
});
