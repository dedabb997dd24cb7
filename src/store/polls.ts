import { sql } from 'kysely';
import { enqueue } from './announcements.ts';
import type { Engine } from './engine.ts';
import { claimThreads } from './leases.ts';
import { num, shownChanged, snapshotColumns } from './schema.ts';
import type { Lease, PollRecord, Store } from './types.ts';

/** Polling: which replica polls which job when, and what each poll found. */
export function pollQueries(
  e: Engine,
): Pick<Store, 'claimDueJobs' | 'nextDueAt' | 'recordPoll' | 'releaseLeases'> {
  const { db } = e;
  return {
    claimDueJobs(now: number, limit: number, lease: Lease) {
      return claimThreads(e, 'poll', now, limit, lease);
    },

    async nextDueAt() {
      const r = await db
        .selectFrom('job_threads')
        .select(
          sql<
            number | string | null
          >`min(case when locked_until > next_poll_at then locked_until else next_poll_at end)`.as(
            'at',
          ),
        )
        .where('next_poll_at', 'is not', null)
        .executeTakeFirst();
      return r?.at == null ? null : Number(r.at);
    },

    recordPoll(p: PollRecord) {
      return e.writeTx(async (tx) => {
        const current = await e
          .forUpdate(tx.selectFrom('job_threads').selectAll().where('id', '=', p.threadId))
          .executeTakeFirst();
        if (!current) return false;
        // Fencing: a poller whose lease ran out and was taken over (or already recorded by
        // the replica that took it) must not write its older answer over a newer one.
        if (p.owner !== undefined && current.locked_by !== p.owner) return false;
        const release = { locked_by: null, locked_until: null };
        // A follow-up landed while this poll was in flight: its answer belongs to the old
        // round and must not stop the new one from being watched.
        if (num(current.round) !== p.round) {
          await tx.updateTable('job_threads').set(release).where('id', '=', p.threadId).execute();
          return false;
        }
        const changed = p.snapshot !== null && shownChanged(current, p.snapshot);
        await tx
          .updateTable('job_threads')
          .set((eb) => ({
            ...(p.snapshot ? snapshotColumns(p.snapshot) : {}),
            ...(p.snapshot?.status === 'active' ? { follow_up_at: null } : {}),
            next_poll_at: p.schedule.nextPollAt,
            poll_interval_ms: p.schedule.pollIntervalMs,
            root_version: changed ? eb('root_version', '+', 1) : eb.ref('root_version'),
            updated_at: p.now,
            ...(p.failingSince === undefined ? {} : { poll_failing_since: p.failingSince }),
            ...release,
          }))
          .where('id', '=', p.threadId)
          .execute();
        for (const a of p.announcements) await enqueue(tx, p.threadId, a, p.now);
        return true;
      });
    },

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
