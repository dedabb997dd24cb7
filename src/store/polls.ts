import type { Engine } from './engine.ts';
import { claimThreads } from './leases.ts';
import { planPolls, writePlan } from './poll-writes.ts';
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
      // recording overlapping batches wait for each other instead of deadlocking. What
      // each item does is worked out against the rows as locked, then written set-wise.
      const ids = [...new Set(ps.map((p) => p.threadId))].sort((a, b) => a - b);
      const rows = await e
        .forUpdate(tx.selectFrom('job_threads').selectAll().where('id', 'in', ids).orderBy('id'))
        .execute();
      const plan = planPolls(rows, ps);
      await writePlan(e, tx, plan);
      return plan.recorded;
    });
  }

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
