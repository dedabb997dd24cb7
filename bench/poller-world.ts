/**
 * The poller benchmark's database: thousands of watched jobs seeded in a few batched inserts
 * (the store's own schema, through Kysely), on SQLite or PostgreSQL, and the plans of the
 * poller's frequent reads at that size.
 */
import SqliteDatabase from 'better-sqlite3';
import { Kysely, PostgresDialect, SqliteDialect, sql } from 'kysely';
import pg from 'pg';
import type { Database } from '../src/store/schema.ts';

export type Place = { kind: 'sqlite'; path: string } | { kind: 'postgres'; url: string };

function open(place: Place): Kysely<Database> {
  if (place.kind === 'sqlite')
    return new Kysely<Database>({
      dialect: new SqliteDialect({ database: new SqliteDatabase(place.path, { timeout: 5_000 }) }),
    });
  return new Kysely<Database>({
    dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: place.url, max: 2 }) }),
  });
}

export interface SeedJob {
  jobId: string;
  /** The workspace (T0001 by default). */
  teamId?: string;
  /** Channel spread: the notifier paces posts per channel. */
  channel: string;
  createdAt: number;
  nextPollAt: number;
  pollIntervalMs: number;
}

/** Inserts watched jobs as the bot leaves them after attachJob and a root update; returns thread ids. */
export async function seedJobs(place: Place, jobs: SeedJob[]): Promise<Map<string, number>> {
  const db = open(place);
  const ids = new Map<string, number>();
  try {
    for (let i = 0; i < jobs.length; i += 500) {
      const rows = await db
        .insertInto('job_threads')
        .values(
          jobs.slice(i, i + 500).map((j, k) => ({
            team_id: j.teamId ?? 'T0001',
            channel_id: j.channel,
            thread_ts: `${1_700_000_000 + i + k}.000100`,
            user_id: 'U0001',
            prompt: 'Benchmark job',
            job_id: j.jobId,
            // What the emulator answers for a seeded job: a poll finds nothing new.
            status: 'active' as const,
            model: 'claude-sonnet-4',
            repository: 'https://github.com/acme/docs',
            ref: 'main',
            pr_link: null,
            error: null,
            root_version: 2,
            root_shown_version: 2,
            next_poll_at: j.nextPollAt,
            poll_interval_ms: j.pollIntervalMs,
            created_at: j.createdAt,
            updated_at: j.createdAt,
            changed_at: j.createdAt,
          })),
        )
        .returning(['id', 'job_id'])
        .execute();
      for (const r of rows) ids.set(r.job_id ?? '', Number(r.id));
    }
    if (place.kind === 'postgres') await sql`analyze job_threads`.execute(db);
    else await sql`analyze`.execute(db);
  } finally {
    await db.destroy();
  }
  return ids;
}

/** Moves every seeded time by `ms`, in one statement: the jobs are due from the moment it says. */
export async function shiftTimes(place: Place, ms: number): Promise<void> {
  const db = open(place);
  try {
    await db
      .updateTable('job_threads')
      .set((eb) => ({
        next_poll_at: eb('next_poll_at', '+', ms),
        created_at: eb('created_at', '+', ms),
        updated_at: eb('updated_at', '+', ms),
        changed_at: eb('changed_at', '+', ms),
      }))
      .execute();
  } finally {
    await db.destroy();
  }
}

/**
 * How the database runs the poller's two frequent reads at this size: the claim of due jobs
 * (its subquery, as claimThreads builds it) and the soonest due time (nextDueAt's first walk).
 */
export async function duePlans(place: Place, now: number): Promise<string[]> {
  const db = open(place);
  const claim = `select id from job_threads where next_poll_at is not null and next_poll_at <= ${now} and (locked_until is null or locked_until <= ${now}) order by next_poll_at, id limit 16`;
  const soonest =
    'select next_poll_at from job_threads where next_poll_at is not null and (locked_until is null or locked_until <= next_poll_at) order by next_poll_at limit 1';
  const held =
    'select locked_until from job_threads where locked_until is not null and next_poll_at is not null and locked_until > next_poll_at order by locked_until limit 1';
  try {
    const plan = async (q: string) => {
      if (place.kind === 'sqlite') {
        const r = await sql.raw<{ detail: string }>(`explain query plan ${q}`).execute(db);
        return r.rows.map((x) => x.detail).join('; ');
      }
      const r = await sql.raw<{ 'QUERY PLAN': string }>(`explain ${q}`).execute(db);
      return r.rows
        .map((x) => x['QUERY PLAN'].trim().replace(/\s+\(cost=[^)]*\)/, ''))
        .filter((l) => !l.startsWith('Filter') && !l.startsWith('Sort Key'))
        .join(' / ');
    };
    return [
      `claim: ${await plan(claim)}`,
      `nextDueAt: ${await plan(soonest)} | ${await plan(held)}`,
    ];
  } finally {
    await db.destroy();
  }
}
