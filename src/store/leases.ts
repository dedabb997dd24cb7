import { type ExpressionBuilder, expressionBuilder, sql } from 'kysely';
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
    /** The threads whose teams a claim walks: watched ones (indexed by team, 0021). */
    listed: (eb: Threads) => eb('next_poll_at', 'is not', null),
  },
  root: {
    by: 'root_locked_by',
    until: 'root_locked_until',
    order: 'updated_at',
    due: () => (eb: Threads) => eb('root_version', '>', eb.ref('root_shown_version')),
    listed: (eb: Threads) => eb('root_version', '>', eb.ref('root_shown_version')),
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
 * Replicas claiming at once that a PostgreSQL claim leaves room for: each finds the first
 * rows locked and takes the next, so a claim ranks `limit × CLAIMERS` rows over all teams
 * (and at least `limit` of each team's): that many claimers at once each get a full batch
 * while the teams ranked hold enough. Fewer (one team's long backlog beside teams with one
 * due each): a claimer may get a short batch, and the poller claims again a pass later.
 */
const CLAIMERS = 8;

/**
 * Leases up to `limit` threads whose work of this kind is due and free, workspaces in turn
 * (each team's oldest due first, then each team's next: `turnOfTeam`), oldest due first
 * within a turn. With one workspace that is simply oldest due first.
 *
 * What it reads is bounded by the batch, not by the backlog: the teams with threads of this
 * kind are walked one index probe each (`teams`), and of each team only its first due ones
 * are ranked (`limit`: no team's later ones could be in the batch; on PostgreSQL
 * more, see CLAIMERS), from the index on (team_id, next_poll_at) for polls
 * (migration 0021). 10,000 due polls cost a claim what its batch does.
 *
 * PostgreSQL: rows another replica is claiming are skipped, and the lease test is repeated
 * outside the ranking, because a row claimed while this statement waited for it is
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
  const rows = await e.db
    .updateTable('job_threads')
    .set({ [k.by]: lease.owner, [k.until]: lease.until })
    .where('id', 'in', dueInTurn(e, kind, now, limit))
    .where(unleased(kind, now))
    .returningAll()
    .execute();
  const order = (t: JobThread) => (kind === 'poll' ? (t.nextPollAt ?? 0) : t.updatedAt);
  return rows.map(toThread).sort((a, b) => order(a) - order(b) || a.id - b.id);
}

/** The ids `claimThreads` leases: at most `limit`, workspaces in turn. */
function dueInTurn(e: Engine, kind: LeaseKind, now: number, limit: number) {
  const k = KINDS[kind];
  const eb = expressionBuilder<Database, 'job_threads'>();
  const order = sql.ref(k.order);
  const free = eb.and([k.due(now)(eb), unleased(kind, now)(eb)]);
  // Every team with threads of this kind, in team order, one index probe each (a loose
  // index scan: PostgreSQL and SQLite have no skip scan to do it for us).
  const listed = k.listed(eb);
  const teams = sql`teams(team_id) as (
    select (select team_id from job_threads where ${listed} order by team_id limit 1)
    union all
    select (select team_id from job_threads where ${listed} and team_id > teams.team_id
      order by team_id limit 1)
    from teams where teams.team_id is not null)`;
  if (e.kind === 'sqlite') {
    // No LATERAL: each team's first `limit` as a correlated list of ids.
    return sql<number>`(with recursive ${teams}, c as (
      select j.id, j.${order} as due_at,
        row_number() over (partition by j.team_id order by j.${order}, j.id) as turn
      from teams join job_threads j on j.id in (
        select id from job_threads where team_id = teams.team_id and ${free}
        order by ${order}, id limit ${limit}))
    select id from c order by turn, due_at, id limit ${limit})`;
  }
  // The rows are ranked in `c` (PostgreSQL locks no row of a query level with a window
  // function); the first of them (`w`: no more are ever walked, and so few that each is
  // found by its key, not by a scan of the table) are locked in turn order, skipping the ones other replicas are claiming,
  // until `limit` are held: replicas claiming at once each get a full batch while the rows
  // ranked hold enough (CLAIMERS), as with a plain ordered SKIP LOCKED walk.
  return sql<number>`(with recursive ${teams}, c as (
      select d.id, d.due_at,
        row_number() over (partition by d.team_id order by d.due_at, d.id) as turn
      from teams cross join lateral (
        select id, team_id, ${order} as due_at from job_threads
        where team_id = teams.team_id and ${free}
        order by ${order}, id
        limit greatest(${limit}, ceil(${limit * CLAIMERS}::float / nullif(
          (select count(team_id) from teams), 0)))) d),
      w as (select id, turn, due_at from c order by turn, due_at, id limit ${limit * CLAIMERS})
    select j.id from w join job_threads j on j.id = w.id
    where ${unleasedAs('j', kind, now)(expressionBuilder<{ j: Database['job_threads'] }, 'j'>())}
    order by w.turn, w.due_at, w.id limit ${limit}
    for update of j skip locked)`;
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
