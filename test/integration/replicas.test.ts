import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { RecordedRequest } from '../fakes/api-emulator.ts';
import { Harness } from '../helpers/harness.ts';
import { eventually, sleep } from '../helpers/net.ts';
import { postgresAvailable } from '../helpers/postgres.ts';

/**
 * Two real bots on one PostgreSQL database, the same fake Slack and API emulator, each
 * serving HTTP on its own port as behind a load balancer.
 */
let h: Harness;
let replicaLog: string[];
let replicaUrl: string;

beforeEach(async () => {
  if (!postgresAvailable) return;
  h = await Harness.create({ engine: 'postgres' });
  await h.start();
  replicaLog = [];
  ({ eventsUrl: replicaUrl } = await h.startReplica(replicaLog));
});
afterEach(async (ctx) => {
  if (!postgresAvailable) return;
  if (ctx.task.result?.state === 'fail') {
    const events = (log: string) =>
      Object.entries(Object.groupBy(log.match(/"msg":"[a-z_.]+"/g) ?? [], (m) => m)).map(
        ([k, v]) => `${k} ×${v?.length}`,
      );
    const shown = Object.groupBy(h.roots(), (m) => m.text.split(':')[0] ?? '');
    console.error({
      roots: Object.fromEntries(Object.entries(shown).map(([k, v]) => [k, v?.length])),
      creates: h.api.requestsTo('create').length,
      first: events(h.logs),
      second: events(replicaLog.join('')),
    });
  }
  await h.close();
});

/** Per job, the time spans during which a GET for it was in flight. */
function pollSpans(gets: RecordedRequest[]): Map<string, [number, number][]> {
  const spans = new Map<string, [number, number][]>();
  for (const r of gets) {
    const jobId = r.path.split('/').at(-1) ?? '';
    const list = spans.get(jobId) ?? [];
    list.push([r.at, r.answeredAt ?? Number.POSITIVE_INFINITY]);
    spans.set(jobId, list);
  }
  return spans;
}

function overlapping(spans: [number, number][]): boolean {
  const sorted = [...spans].sort((a, b) => a[0] - b[0]);
  return sorted.some((s, i) => i > 0 && s[0] < (sorted[i - 1]?.[1] ?? 0));
}

describe.skipIf(!postgresAvailable)('replicas on one PostgreSQL database', () => {
  it("open each its pool's connections beside the start: a first burst finds them open", async () => {
    const filled = (log: () => string) =>
      eventually(() => /"msg":"store\.pool_filled"/.test(log()) && log(), 'store.pool_filled');
    for (const log of [await filled(() => h.logs), await filled(() => replicaLog.join(''))])
      expect(log).toMatch(/"open":10,[^\n]*"msg":"store\.pool_filled"/);
  });

  it('share the polling, never poll one job at once, and announce each outcome once', async () => {
    // Slow answers widen the window in which two replicas could poll the same job.
    h.api.setLatency('get', 120);
    const n = 16;
    for (let i = 0; i < n; i++) await h.command(`Job ${i}`, i % 2 ? { url: replicaUrl } : {});
    const roots = await eventually(() => h.roots().length === n && h.roots(), 'every root');
    const jobs = await eventually(
      () => h.api.createdJobs().length === n && h.api.createdJobs(),
      'every job',
    );
    expect(h.api.requestsTo('create')).toHaveLength(n);
    // Finish them at random moments, some failing, while both replicas poll.
    for (const [i, job] of jobs.entries()) {
      await sleep(Math.random() * 120);
      if (i % 5 === 0) h.api.fail(job.id);
      else h.api.complete(job.id, `https://github.com/acme/docs/pull/${i}`);
    }
    await eventually(
      () => roots.every((r) => h.botReplies(r.ts).length >= 1),
      'an announcement in every thread',
      15_000,
    );
    await sleep(600); // room for a duplicate to show up
    for (const r of roots) expect(h.botReplies(r.ts)).toHaveLength(1);

    const spans = pollSpans(h.api.requestsTo('get'));
    for (const [jobId, list] of spans) expect(overlapping(list), jobId).toBe(false);
    // Both took part: each logged polls of its own.
    expect(h.logs).toContain('"msg":"poll.');
    expect(replicaLog.join('')).toContain('"msg":"poll.');
  });

  it('never lets more than 100 creates through an hour, however the commands are spread', {
    timeout: 60_000,
  }, async () => {
    const n = 120;
    const sends: Promise<unknown>[] = [];
    for (let i = 0; i < n; i++) {
      sends.push(h.command(`Budget job ${i}`, i % 2 ? { url: replicaUrl } : {}));
      if (sends.length % 10 === 0) await Promise.all(sends.splice(0));
    }
    await Promise.all(sends);
    // Every start takes its slot before posting, under the budget's lock: the 20 refused are
    // told only to the requester, and none of them has a root in the channel.
    await eventually(
      () =>
        h.slack.responses.filter((r) =>
          JSON.stringify(r.body).includes('budget (100 jobs and messages per hour) is used up'),
        ).length === 20 || undefined,
      'the refusals',
      30_000,
    );
    await eventually(() => h.api.requestsTo('create').length === 100 || undefined, 'the jobs');
    await sleep(500); // room for a create or a root too many to show up
    expect(h.api.requestsTo('create')).toHaveLength(100);
    expect(h.roots()).toHaveLength(100);
    expect(h.roots().filter((m) => m.text.startsWith('Could not start'))).toHaveLength(0);
  });
});
