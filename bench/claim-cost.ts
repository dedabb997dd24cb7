/**
 * `node bench/claim-cost.ts`: what one claim of due polls costs the database, at 10,000 due
 * jobs in one workspace and spread over 50, on SQLite and PostgreSQL: the claim's time
 * (median, p99, max over repeated claims, each given back before the next) and, on
 * PostgreSQL, its plan under EXPLAIN ANALYZE. `--limit N` sets the batch (16 by default, the
 * poll pool's floor).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import { type CompiledQuery, Kysely, PostgresDialect, SqliteDialect } from 'kysely';
import pg from 'pg';
import type { Engine } from '../src/store/engine.ts';
import { claimThreads } from '../src/store/leases.ts';
import { openPostgresStore } from '../src/store/postgres.ts';
import type { Database } from '../src/store/schema.ts';
import { openSqliteStore } from '../src/store/sqlite.ts';
import { createTestDatabase } from '../test/helpers/postgres.ts';
import { percentile, silentLogger } from './measure.ts';
import { type Place, type SeedJob, seedJobs } from './poller-world.ts';

const arg = (name: string, fallback: number) =>
  process.argv.includes(name) ? Number(process.argv[process.argv.indexOf(name) + 1]) : fallback;
const LIMIT = arg('--limit', 16);
const JOBS = arg('--jobs', 10_000);
const ROUNDS = arg('--rounds', 200);

/** An engine over its own Kysely, remembering the last query it ran (for EXPLAIN). */
function engineOf(place: Place, seen: { last?: CompiledQuery }): Engine {
  const log = (e: { query: CompiledQuery }) => {
    seen.last = e.query;
  };
  const db =
    place.kind === 'sqlite'
      ? new Kysely<Database>({
          dialect: new SqliteDialect({ database: new SqliteDatabase(place.path) }),
          log,
        })
      : new Kysely<Database>({
          dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: place.url }) }),
          log,
        });
  const e = {
    kind: place.kind,
    db,
    skipLocked: (qb: never, of?: string) =>
      place.kind === 'sqlite'
        ? qb
        : (qb as { forUpdate(o?: string): { skipLocked(): never } }).forUpdate(of).skipLocked(),
  };
  return e as unknown as Engine;
}

async function measure(place: Place, teams: number): Promise<string[]> {
  const now = Date.now();
  const jobs: SeedJob[] = Array.from({ length: JOBS }, (_, i) => ({
    jobId: `j${i}`,
    teamId: `T${String(i % teams).padStart(4, '0')}`,
    channel: `C${i % 1000}`,
    createdAt: now - 3_600_000,
    nextPollAt: now - 1 - Math.floor(Math.random() * 60_000),
    pollIntervalMs: 60_000,
  }));
  await seedJobs(place, jobs);
  const seen: { last?: CompiledQuery } = {};
  const e = engineOf(place, seen);
  try {
    const times: number[] = [];
    for (let i = 0; i < ROUNDS; i++) {
      const started = performance.now();
      const got = await claimThreads(e, 'poll', now, LIMIT, { owner: 'bench', until: now + 1 });
      times.push(performance.now() - started);
      if (got.length !== LIMIT) throw new Error(`claimed ${got.length}, not ${LIMIT}`);
      await e.db
        .updateTable('job_threads')
        .set({ locked_by: null, locked_until: null })
        .where('locked_by', '=', 'bench')
        .execute();
    }
    const f = (x: number) => x.toFixed(2);
    const label = `${place.kind} ${JOBS} due over ${teams} workspace(s), limit ${LIMIT}`;
    const out = [
      `${label}: claim p50 ${f(percentile(times, 50))} ms, p99 ${f(percentile(times, 99))} ms, max ${f(Math.max(...times))} ms`,
    ];
    if (place.kind === 'postgres') {
      // The claim itself (the last query before the release): EXPLAIN ANALYZE, rolled back.
      const client = new pg.Client({ connectionString: place.url });
      await client.connect();
      try {
        await claimThreads(e, 'poll', now, LIMIT, { owner: 'bench', until: now + 1 });
        const q = seen.last!;
        await e.db
          .updateTable('job_threads')
          .set({ locked_by: null, locked_until: null })
          .execute();
        await client.query('begin');
        const plan = await client.query(`explain (analyze, buffers) ${q.sql}`, [...q.parameters]);
        await client.query('rollback');
        out.push(...plan.rows.map((r: Record<string, string>) => `  ${r['QUERY PLAN']}`));
      } finally {
        await client.end();
      }
    }
    return out;
  } finally {
    await e.db.destroy();
  }
}

for (const kind of ['sqlite', 'postgres'] as const) {
  for (const teams of [1, 50]) {
    const dir = mkdtempSync(join(tmpdir(), 'bench-claims-'));
    const database = kind === 'postgres' ? await createTestDatabase() : undefined;
    const place: Place = database
      ? { kind: 'postgres', url: database.url }
      : { kind: 'sqlite', path: join(dir, 'bot.sqlite') };
    try {
      const store =
        place.kind === 'sqlite'
          ? await openSqliteStore(place.path)
          : await openPostgresStore(place.url, { log: silentLogger() });
      await store.close();
      for (const line of await measure(place, teams)) console.log(line);
    } finally {
      rmSync(dir, { recursive: true, force: true });
      await database?.drop();
    }
  }
}
