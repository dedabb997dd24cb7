/**
 * `node bench/poll-writes.ts`: what one batch of poll outcomes costs the database
 * (store.recordPolls, as the poll writer sends it), on SQLite and PostgreSQL, at 10,000
 * watched jobs: each round claims `--batch` due jobs (128 by default, the writer's batch)
 * and records them all finished with one announcement each, as in the fairness benchmark's
 * burst. Prints the batch's time (median, p99, max over `--rounds` batches).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openPostgresStore } from '../src/store/postgres.ts';
import { openSqliteStore } from '../src/store/sqlite.ts';
import type { PollRecord, Store } from '../src/store/types.ts';
import { createTestDatabase } from '../test/helpers/postgres.ts';
import { percentile, silentLogger } from './measure.ts';
import { type Place, seedJobs } from './poller-world.ts';

const arg = (name: string, fallback: number) =>
  process.argv.includes(name) ? Number(process.argv[process.argv.indexOf(name) + 1]) : fallback;
const BATCH = arg('--batch', 128);
const JOBS = arg('--jobs', 10_000);
const ROUNDS = arg('--rounds', 60);

async function measure(store: Store, now: number): Promise<number[]> {
  const times: number[] = [];
  for (let i = 0; i < ROUNDS; i++) {
    const lease = { owner: 'bench', until: now + 60_000 };
    const due = await store.claimDueJobs(now, BATCH, lease);
    if (due.length !== BATCH) throw new Error(`claimed ${due.length}, not ${BATCH}`);
    const batch: PollRecord[] = due.map((t) => ({
      threadId: t.id,
      round: t.round,
      snapshot: {
        jobId: t.jobId ?? '',
        status: 'completed',
        model: t.model,
        repository: t.repository,
        ref: t.ref,
        prLink: `https://github.com/acme/docs/pull/${t.id}`,
      },
      schedule: { nextPollAt: null, pollIntervalMs: 60_000 },
      announcements: [
        {
          key: `${t.jobId}:0:completed`,
          kind: 'completed',
          prLink: `https://github.com/acme/docs/pull/${t.id}`,
        },
      ],
      now: now + i,
      owner: lease.owner,
      failingSince: null,
    }));
    const started = performance.now();
    const recorded = await store.recordPolls(batch);
    times.push(performance.now() - started);
    if (recorded.some((r) => !r)) throw new Error('a poll of the batch was refused');
  }
  return times;
}

for (const kind of ['sqlite', 'postgres'] as const) {
  const dir = mkdtempSync(join(tmpdir(), 'bench-poll-writes-'));
  const database = kind === 'postgres' ? await createTestDatabase() : undefined;
  const place: Place = database
    ? { kind: 'postgres', url: database.url }
    : { kind: 'sqlite', path: join(dir, 'bot.sqlite') };
  try {
    const open = () =>
      place.kind === 'sqlite'
        ? openSqliteStore(place.path)
        : openPostgresStore(place.url, { log: silentLogger() });
    await (await open()).close(); // the schema
    const now = Date.now();
    await seedJobs(
      place,
      Array.from({ length: JOBS }, (_, i) => ({
        jobId: `j${i}`,
        teamId: `T${String(i % 50).padStart(4, '0')}`,
        channel: `C${i % 1000}`,
        createdAt: now - 3_600_000,
        nextPollAt: now - 1 - Math.floor(Math.random() * 60_000),
        pollIntervalMs: 60_000,
      })),
    );
    const store = await open();
    try {
      const times = await measure(store, now);
      const f = (x: number) => x.toFixed(2);
      console.log(
        `${kind} ${JOBS} jobs, recordPolls of ${BATCH} finished with an announcement each: ` +
          `p50 ${f(percentile(times, 50))} ms, p99 ${f(percentile(times, 99))} ms, ` +
          `max ${f(Math.max(...times))} ms over ${ROUNDS} batches`,
      );
    } finally {
      await store.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
    await database?.drop();
  }
}
