import type { Transaction } from 'kysely';
import { enqueue } from './announcements.ts';
import type { Engine } from './engine.ts';
import { claimThreads } from './leases.ts';
import { type Database, num, shownChanged, snapshotColumns, type ThreadRow } from './schema.ts';
import type { Lease, PollRecord, Store } from './types.ts';

/** Polling: which replica polls which job when, and what each poll found. */
export function pollQueries(
  e: Engine,
): Pick<Store, 'claimDueJobs' | 'nextDueAt' | 'recordPoll' | 'recordPolls' | 'releaseLeases'> {
  const { db } = e;

  async function recordPolls(ps: PollRecord[]): Promise<boolean[]> {
    if (ps.length === 0) return [];
    return e.writeTx(async (tx) => {
      // Every row of the batch is locked up front, in id order, so that two replicas
      // recording overlapping batches wait for each other instead of deadlocking.
      const ids = [...new Set(ps.map((p) => p.threadId))].sort((a, b) => a - b);
      const rows = await e
        .forUpdate(tx.selectFrom('job_threads').selectAll().where('id', 'in', ids).orderBy('id'))
        .execute();
      const current = new Map(rows.map((r) => [num(r.id), r]));
      const recorded: boolean[] = [];
      for (const p of ps) {
        const row = current.get(p.threadId);
        // A thread recorded twice in one batch is read again for its second item.
        current.delete(p.threadId);
        recorded.push(await recordOne(tx, row ?? (await reread(tx, p.threadId)), p));
      }
      return recorded;
    });
  }

  const reread = (tx: Transaction<Database>, id: number) =>
    tx.selectFrom('job_threads').selectAll().where('id', '=', id).executeTakeFirst();

  return {
    claimDueJobs(now: number, limit: number, lease: Lease) {
      return claimThreads(e, 'poll', now, limit, lease);
    },

    async nextDueAt() {
      // Two short index walks rather than a pass over every watched job: the soonest poll
      // that no lease holds past its due time, and the soonest end of a lease that does.
      const free = await db
        .selectFrom('job_threads')
        .select('next_poll_at as at')
        .where('next_poll_at', 'is not', null)
        .where((eb) =>
          eb.or([eb('locked_until', 'is', null), eb('locked_until', '<=', eb.ref('next_poll_at'))]),
        )
        .orderBy('next_poll_at')
        .limit(1)
        .executeTakeFirst();
      const held = await db
        .selectFrom('job_threads')
        .select('locked_until as at')
        .where('locked_until', 'is not', null)
        .where('next_poll_at', 'is not', null)
        .where((eb) => eb('locked_until', '>', eb.ref('next_poll_at')))
        .orderBy('locked_until')
        .limit(1)
        .executeTakeFirst();
      const times = [free?.at, held?.at].filter((t) => t != null).map(Number);
      return times.length ? Math.min(...times) : null;
    },

    async recordPoll(p: PollRecord) {
      const [recorded] = await recordPolls([p]);
      return recorded ?? false;
    },

    recordPolls,

    async releaseLeases(owner: string) {
      await db
        .updateTable('job_threads')
        .set({ locked_by: null, locked_until: null })
        .where('locked_by', '=', owner)
        .execute();
      await db
        .updateTable('job_threads')
        .set({ root_locked_by: null, root_locked_until: null })
        .where('root_locked_by', '=', owner)
        .execute();
    },
  };
}

/** One poll's outcome, inside the batch's transaction, against its row as locked there. */
async function recordOne(
  tx: Transaction<Database>,
  current: ThreadRow | undefined,
  p: PollRecord,
): Promise<boolean> {
  if (!current) return false;
  // Fencing: a poller whose lease ran out and was taken over (or already recorded by the
  // replica that took it) must not write its older answer over a newer one.
  if (p.owner !== undefined && current.locked_by !== p.owner) return false;
  const release = { locked_by: null, locked_until: null };
  // A follow-up landed while this poll was in flight: its answer belongs to the old round
  // and must not stop the new one from being watched.
  // The requester stopped watching while this poll was in flight: it schedules nothing more.
  if (num(current.round) !== p.round || current.unwatched_by !== null) {
    await tx.updateTable('job_threads').set(release).where('id', '=', p.threadId).execute();
    return false;
  }
  const changed = p.snapshot !== null && shownChanged(current, p.snapshot);
  // What the poller's schedule resets on: a new status or PR link, not a renamed model.
  const moved =
    p.snapshot !== null &&
    (current.status !== p.snapshot.status || current.pr_link !== p.snapshot.prLink);
  await tx
    .updateTable('job_threads')
    .set((eb) => ({
      ...(p.snapshot ? snapshotColumns(p.snapshot) : {}),
      ...(p.snapshot?.status === 'active' ? { follow_up_at: null } : {}),
      next_poll_at: p.schedule.nextPollAt,
      poll_interval_ms: p.schedule.pollIntervalMs,
      root_version: changed ? eb('root_version', '+', 1) : eb.ref('root_version'),
      ...(moved ? { changed_at: p.now } : {}),
      updated_at: p.now,
      ...(p.failingSince === undefined ? {} : { poll_failing_since: p.failingSince }),
      ...release,
    }))
    .where('id', '=', p.threadId)
    .execute();
  // A job drafted from an insight gap opened its pull request: the gap's "did it work?"
  // counts from here.
  if (current.gap_id !== null && current.pr_link === null && p.snapshot?.prLink)
    await tx
      .updateTable('insight_gaps')
      .set({ pr_at: p.now })
      .where('id', '=', num(current.gap_id))
      .where('pr_at', 'is', null)
      .execute();
  for (const a of p.announcements) await enqueue(tx, p.threadId, a, p.now);
  return true;
}
