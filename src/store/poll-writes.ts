import { sql, type Transaction } from 'kysely';
import { enqueueMany, type Queued } from './announcements.ts';
import type { Engine } from './engine.ts';
import { type Database, num, shownChanged, snapshotColumns, type ThreadRow } from './schema.ts';
import type { PollRecord } from './types.ts';

/**
 * What a batch of poll outcomes does to the rows it read (locked), worked out item by item
 * in the batch's order as if each were recorded alone, before anything is written: the
 * answer to each item, each touched row as the batch leaves it, the outbox items and the
 * insight gaps whose pull request opened.
 */
export interface PollPlan {
  recorded: boolean[];
  rows: Map<number, ThreadRow>;
  outbox: Queued[];
  gapsOpened: { gapId: number; at: number }[];
}

export function planPolls(read: readonly ThreadRow[], ps: readonly PollRecord[]): PollPlan {
  const current = new Map(read.map((r) => [num(r.id), r]));
  const plan: PollPlan = { recorded: [], rows: new Map(), outbox: [], gapsOpened: [] };
  for (const p of ps) {
    const before = current.get(p.threadId);
    const after = before && planOne(before, p, plan);
    plan.recorded.push(after?.recorded ?? false);
    if (!after?.row) continue;
    // A thread recorded twice in one batch meets its second item as the first left it.
    current.set(p.threadId, after.row);
    plan.rows.set(p.threadId, after.row);
  }
  return plan;
}

/** One poll against its row: the row it leaves (none when nothing is written). */
function planOne(
  current: ThreadRow,
  p: PollRecord,
  plan: PollPlan,
): { recorded: boolean; row?: ThreadRow } {
  // Fencing: a poller whose lease ran out and was taken over (or already recorded by the
  // replica that took it) must not write its older answer over a newer one.
  if (p.owner !== undefined && current.locked_by !== p.owner) return { recorded: false };
  const release = { locked_by: null, locked_until: null };
  // A follow-up landed while this poll was in flight: its answer belongs to the old round
  // and must not stop the new one from being watched.
  // The requester stopped watching while this poll was in flight: it schedules nothing more.
  if (num(current.round) !== p.round || current.unwatched_by !== null)
    return { recorded: false, row: { ...current, ...release } };
  const changed = p.snapshot !== null && shownChanged(current, p.snapshot);
  // What the poller's schedule resets on: a new status or PR link, not a renamed model.
  const moved =
    p.snapshot !== null &&
    (current.status !== p.snapshot.status || current.pr_link !== p.snapshot.prLink);
  // A job drafted from an insight gap opened its pull request: the gap's "did it work?"
  // counts from here.
  if (current.gap_id !== null && current.pr_link === null && p.snapshot?.prLink)
    plan.gapsOpened.push({ gapId: num(current.gap_id), at: p.now });
  for (const a of p.announcements)
    plan.outbox.push({ threadId: p.threadId, announcement: a, now: p.now });
  const row: ThreadRow = {
    ...current,
    ...(p.snapshot ? snapshotColumns(p.snapshot) : {}),
    ...(p.snapshot?.status === 'active' ? { follow_up_at: null } : {}),
    next_poll_at: p.schedule.nextPollAt,
    poll_interval_ms: p.schedule.pollIntervalMs,
    root_version: num(current.root_version) + (changed ? 1 : 0),
    ...(moved ? { changed_at: p.now } : {}),
    updated_at: p.now,
    ...(p.failingSince === undefined ? {} : { poll_failing_since: p.failingSince }),
    ...release,
  };
  return { recorded: true, row };
}

/** The columns a poll writes; every touched row gets all of them, as planned. */
const written = [
  ['job_id', 'text'],
  ['status', 'text'],
  ['model', 'text'],
  ['repository', 'text'],
  ['ref', 'text'],
  ['pr_link', 'text'],
  ['follow_up_at', 'bigint'],
  ['next_poll_at', 'bigint'],
  ['poll_interval_ms', 'integer'],
  ['root_version', 'integer'],
  ['changed_at', 'bigint'],
  ['updated_at', 'bigint'],
  ['poll_failing_since', 'bigint'],
  ['locked_by', 'text'],
  ['locked_until', 'bigint'],
] as const satisfies readonly (readonly [keyof ThreadRow, string])[];

/** Rows per statement on SQLite, well under its 32,766 bound parameters. */
const CHUNK = 500;

/**
 * Writes a plan in the caller's transaction, in a few statements whatever the batch's size:
 * one UPDATE of every touched row (PostgreSQL: joined to unnest() of one array per column;
 * SQLite: to a VALUES list), one INSERT of the outbox items, one UPDATE per opened gap.
 */
export async function writePlan(e: Engine, tx: Transaction<Database>, plan: PollPlan) {
  const rows = [...plan.rows.entries()];
  // PostgreSQL binds one array per column, whatever the number of rows.
  const size = e.kind === 'sqlite' ? CHUNK : Math.max(rows.length, 1);
  for (let i = 0; i < rows.length; i += size) await updateRows(e, tx, rows.slice(i, i + size));
  await enqueueMany(tx, plan.outbox);
  for (const g of plan.gapsOpened)
    await tx
      .updateTable('insight_gaps')
      .set({ pr_at: g.at })
      .where('id', '=', g.gapId)
      .where('pr_at', 'is', null)
      .execute();
}

async function updateRows(e: Engine, tx: Transaction<Database>, rows: [number, ThreadRow][]) {
  if (rows.length === 0) return;
  const set = sql.join(written.map(([c]) => sql`${sql.ref(c)} = v.${sql.ref(c)}`));
  const names = sql.join([sql.ref('id'), ...written.map(([c]) => sql.ref(c))]);
  if (e.kind === 'postgres') {
    const arrays = sql.join([
      sql`${rows.map(([id]) => id)}::integer[]`,
      ...written.map(([c, type]) => sql`${rows.map(([, r]) => r[c])}::${sql.raw(type)}[]`),
    ]);
    await sql`update job_threads set ${set} from unnest(${arrays}) as v(${names})
      where job_threads.id = v.id`.execute(tx);
    return;
  }
  const values = sql.join(
    rows.map(([id, r]) => sql`(${sql.join([id, ...written.map(([c]) => r[c])])})`),
  );
  await sql`with v(${names}) as (values ${values})
    update job_threads set ${set} from v where job_threads.id = v.id`.execute(tx);
}
