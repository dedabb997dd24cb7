import { type ExpressionBuilder, sql } from 'kysely';
import { enqueue } from './announcements.ts';
import type { Engine } from './engine.ts';
import { type Database, num, shownChanged, snapshotColumns, toThread } from './schema.ts';
import type { Lease, PollRecord, Store } from './types.ts';

type Threads = ExpressionBuilder<Database, 'job_threads'>;

/** No live lease holds the job: never leased, released, or its holder's time is up. */
const unleased = (now: number) => (eb: Threads) =>
  eb.or([eb('locked_until', 'is', null), eb('locked_until', '<=', now)]);

/** Polling: which replica polls which job when, and what each poll found. */
export function pollQueries(
  e: Engine,
): Pick<Store, 'claimDueJobs' | 'nextDueAt' | 'recordPoll' | 'releaseLeases'> {
  const { db } = e;
  return {
    async claimDueJobs(now: number, limit: number, lease: Lease) {
      const due = e.skipLocked(
        db
          .selectFrom('job_threads')
          .select('id')
          .where('next_poll_at', 'is not', null)
          .where('next_poll_at', '<=', now)
          .where(unleased(now))
          .orderBy('next_poll_at')
          .limit(limit),
      );
      // The lease test is repeated outside the subquery: PostgreSQL re-checks it on a row
      // another replica claimed while this statement waited for it, and then skips the row.
      const rows = await db
        .updateTable('job_threads')
        .set({ locked_by: lease.owner, locked_until: lease.until })
        .where('id', 'in', due)
        .where(unleased(now))
        .returningAll()
        .execute();
      return rows
        .map(toThread)
        .sort((a, b) => (a.nextPollAt ?? 0) - (b.nextPollAt ?? 0) || a.id - b.id);
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
