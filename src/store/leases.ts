import { type ExpressionBuilder, sql } from 'kysely';
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

/** `unleased`, of the threads under an alias (a claim's join). */
const unleasedAs =
  (alias: 'j', kind: LeaseKind, now: number) =>
  (eb: ExpressionBuilder<{ j: Database['job_threads'] }, 'j'>) =>
    eb.or([
      eb(`${alias}.${KINDS[kind].until}`, 'is', null),
      eb(`${alias}.${KINDS[kind].until}`, '<=', now),
    ]);

/** No live lease of this kind holds the thread: never leased, released, or run out. */
export const unleased = (kind: LeaseKind, now: number) => (eb: Threads) =>
  eb.or([eb(KINDS[kind].until, 'is', null), eb(KINDS[kind].until, '<=', now)]);

/**
 * A workspace's turn among the threads `where` selects: 1 for each team's first in
 * `order`, 2 for its second, and so on. Ordered by turn first, a list takes every team's
 * first before any team's second: a workspace with hundreds of threads due cannot fill a
 * batch while another's one thread waits. Within one team, the order is `order`'s.
 */
export function turnOfTeam(...order: string[]) {
  const by = sql.join(order.map((c) => sql.ref(c)));
  return sql<number>`row_number() over (partition by team_id order by ${by})`;
}

/**
 * Leases up to `limit` threads whose work of this kind is due and free, workspaces in turn
 * (each team's oldest due first, then each team's next: `turnOfTeam`), oldest due first
 * within a turn. With one workspace that is simply oldest due first.
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
  // The turns are counted over every due thread, in a subquery: PostgreSQL locks no row of
  // a query level with a window function. The rows are then locked in turn order, skipping
  // the ones other replicas are claiming, until `limit` are held: replicas claiming at once
  // each get a full batch while enough are due, as with a plain ordered SKIP LOCKED walk.
  const candidates = e.db
    .selectFrom('job_threads')
    .select(['id', `${k.order} as due_at`, turnOfTeam(k.order, 'id').as('turn')])
    .where(k.due(now))
    .where(unleased(kind, now))
    .as('c');
  const due = e.skipLocked(
    e.db
      .selectFrom('job_threads as j')
      .innerJoin(candidates, 'c.id', 'j.id')
      .select('j.id')
      .where(unleasedAs('j', kind, now))
      .orderBy('c.turn')
      .orderBy('c.due_at')
      .orderBy('c.id')
      .limit(limit),
    'j',
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
