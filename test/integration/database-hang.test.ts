import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { TcpProxy } from '../fakes/tcp-proxy.ts';
import { Harness } from '../helpers/harness.ts';
import { eventually, sleep } from '../helpers/net.ts';
import { postgresAvailable } from '../helpers/postgres.ts';
import { answers, spawnBot } from '../helpers/process.ts';

/**
 * The real bot on a real PostgreSQL database reached through a TCP proxy that stops
 * forwarding bytes without closing anything, as a partition or a failover does.
 * DATABASE_TIMEOUT_MS is 1 s here: statements and connecting give up after 1 s, an
 * unanswered query after 2 s, a loop's store call after 2 s.
 */
let h: Harness;
let proxy: TcpProxy;

beforeEach(async () => {
  if (!postgresAvailable) return;
  h = await Harness.create({ engine: 'postgres', env: { DATABASE_TIMEOUT_MS: '1000' } });
  const db = new URL(h.env.DATABASE_URL ?? '');
  proxy = await TcpProxy.start({ host: db.hostname, port: Number(db.port || 5432) });
  h.env.DATABASE_URL = proxy.rewrite(h.env.DATABASE_URL ?? '');
});
afterEach(async (ctx) => {
  if (!postgresAvailable) return;
  if (ctx.task.result?.state === 'fail') console.error(h.logs.split('\n').slice(-40).join('\n'));
  await proxy.close();
  await h.close();
});

interface Ready {
  status: number;
  body: { failed: string[]; checks: Record<string, string> };
}
async function readyz(): Promise<Ready> {
  const res = await fetch(h.url('/readyz'), { signal: AbortSignal.timeout(10_000) });
  return { status: res.status, body: (await res.json()) as Ready['body'] };
}

const PR = 'https://github.com/acme/docs/pull/7';
/** The poller recording a poll: a transaction that has just locked the job's row. */
const RECORDING_A_POLL = /from "job_threads"[^\0]* for update\0/;

describe.skipIf(!postgresAvailable)('a database that stops answering', () => {
  it('is not ready within 15 s, names what failed, and announces what completed meanwhile once it is back', async () => {
    await h.start();
    await h.command('Add a quickstart');
    const root = await eventually(() => h.roots()[0], 'root');
    const job = await eventually(() => h.api.createdJobs()[0], 'job');
    await eventually(() => h.slack.callsTo('chat.update').length > 0, 'the root shows the job');
    expect((await readyz()).status).toBe(200);
    // A pool full of connections, all of which the outage will leave dead.
    const store = h.botStore!;
    await Promise.all(Array.from({ length: 10 }, () => store.ping()));
    expect(proxy.open).toBeGreaterThanOrEqual(10);

    // The outage starts in the middle of a transaction holding the job's row.
    proxy.blackholeAfter((chunk) => RECORDING_A_POLL.test(chunk.toString('latin1')));
    await eventually(() => proxy.blackholed, 'the black hole to open');
    const down = await eventually(
      async () => {
        const r = await readyz();
        return r.status === 503 && r.body;
      },
      '/readyz to turn 503',
      15_000,
    );
    expect(down.failed).toContain('database');
    expect(down.checks.database).toBe('timeout');
    // The poller's store calls have gone unanswered for 3 of its intervals.
    const stalled = await eventually(
      async () => {
        const r = await readyz();
        return r.body.checks.loops?.includes('poller') && r.body;
      },
      'the poller to be reported stalled',
      15_000,
    );
    expect(stalled.failed).toContain('loops');
    expect(stalled.checks.loops).toMatch(/^stalled: .*poller/);
    // /metrics answers on its own time, the database's gauges unknown.
    const metrics = await fetch(h.url('/metrics'), { signal: AbortSignal.timeout(10_000) });
    expect(metrics.status).toBe(200);
    expect(await metrics.text()).toMatch(/^docs_agent_outbox_depth nan$/im);

    // The job completes while the bot cannot reach its database.
    h.api.complete(job.id, PR);
    await sleep(500);
    expect(h.botReplies(root.ts)).toHaveLength(0);

    // A failover: the old connections stay dead (their transaction on the server too, once
    // idle too long), new ones reach the database.
    proxy.heal({ strand: true });
    await eventually(
      () => h.botReplies(root.ts).some((m) => m.text.includes(PR)),
      'the completion announced',
      30_000,
    );
    await eventually(async () => (await readyz()).status === 200, '/readyz back to 200', 15_000);
    const ready = await readyz();
    expect(ready.body.checks).toMatchObject({ database: 'ok', loops: 'ok' });
    await sleep(1_000); // room for a duplicate
    expect(h.botReplies(root.ts).filter((m) => m.text.includes(PR))).toHaveLength(1);
  }, 90_000);

  it('a SIGTERM while the database does not answer still ends the process', async () => {
    // Long timeouts: a loop's store call would wait 2 min, a query 61 s, before giving up.
    const bot = spawnBot({ ...h.env, DATABASE_TIMEOUT_MS: '60000' });
    await answers(h.url('/readyz'));
    // Open connections in the pool, which a close would wait on for a goodbye.
    await Promise.all(Array.from({ length: 10 }, () => readyz()));
    proxy.blackhole();
    await eventually(async () => (await readyz()).status === 503, '/readyz to turn 503', 15_000);

    bot.child.kill('SIGTERM');
    const code = await Promise.race([bot.exited, sleep(30_000).then(() => 'still running')]);
    if (code === 'still running') bot.child.kill('SIGKILL');
    expect(code, bot.output().slice(-3_000)).toBe(0);
    expect(bot.output()).toContain('bot.stopped');
    // The pool's connections never said goodbye: they were cut.
    expect(bot.output()).toContain('store.close_cut');
  }, 60_000);
});
