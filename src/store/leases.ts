import type { ExpressionBuilder } from 'kysely';
import type { Engine } from './engine.ts';
import { type Database, toThread } from './schema.ts';
import type { JobThread, Lease } from './types.ts';

type Threads = ExpressionBuilder<Database, 'job_threads'>;

/** The two kinds of work on a thread that replicas lease: its polls, and its root message. */
const KINDS = {
  poll: {
    by: 'locked_by',
    until: 'locked_until',
    order: 'next_poll_at',
    due: (now: number) => (eb: Threads) =>
      eb.and([eb('next_poll_at', 'is not', null), eb('next_poll_at', '<=', now)]),
  },
  root: {
    by: 'root_locked_by',
    until: 'root_locked_until',
    order: 'updated_at',
    due: () => (eb: Threads) => eb('root_version', '>', eb.ref('root_shown_version')),
  },
} as const;

export type LeaseKind = keyof typeof KINDS;

/** No live lease of this kind holds the thread: never leased, released, or run out. */
export const unleased = (kind: LeaseKind, now: number) => (eb: Threads) =>
  eb.or([eb(KINDS[kind].until, 'is', null), eb(KINDS[kind].until, '<=', now)]);

/**
 * Leases up to `limit` threads whose work of this kind is due and free, oldest due first.
 * PostgreSQL: rows another replica is claiming are skipped, and the lease test is repeated
 * outside the subquery, because a row claimed while this statement waited for it is
 * re-checked there and then left out. SQLite: one writer at a time, nothing to skip.
 */
export async function claimThreads(
  e: Engine,
  kind: LeaseKind,
  now: number,
  limit: number,
  lease: Lease,
): Promise<JobThread[]> {
  const k = KINDS[kind];
  const due = e.skipLocked(
    e.db
      .selectFrom('job_threads')
      .select('id')
      .where(k.due(now))
      .where(unleased(kind, now))
      .orderBy(k.order)
      .orderBy('id')
      .limit(limit),
  );
  const rows = await e.db
    .updateTable('job_threads')
    .set({ [k.by]: lease.owner, [k.until]: lease.until })
    .where('id', 'in', due)
    .where(unleased(kind, now))
    .returningAll()
    .execute();
  const order = (t: JobThread) => (kind === 'poll' ? (t.nextPollAt ?? 0) : t.updatedAt);
  return rows.map(toThread).sort((a, b) => order(a) - order(b) || a.id - b.id);
}

/** Whether a thread's work of this kind is due and free: the test a claim repeats. */
export const dueAndFree = (kind: LeaseKind, now: number) => (eb: Threads) =>
  eb.and([KINDS[kind].due(now)(eb), unleased(kind, now)(eb)]);

/**
 * Leases one thread's work of this kind if it is still due and free, and returns the thread
 * as it is now; undefined if it is done or another replica holds it. One conditional
 * UPDATE: in PostgreSQL a racer waits for the row and then finds it leased.
 */
export async function claimThread(
  e: Engine,
  kind: LeaseKind,
  id: number,
  now: number,
  lease: Lease,
): Promise<JobThread | undefined> {
  const k = KINDS[kind];
  const row = await e.db
    .updateTable('job_threads')
    .set({ [k.by]: lease.owner, [k.until]: lease.until })
    .where('id', '=', id)
    .where(dueAndFree(kind, now))
    .returningAll()
    .executeTakeFirst();
  return row && toThread(row);
}
