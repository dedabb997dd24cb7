import type { Engine } from './engine.ts';
import { toThread } from './schema.ts';
import type { Store } from './types.ts';

/** What the root message's buttons and status reaction need from a thread row. */
export function buttonQueries(
  e: Engine,
): Pick<Store, 'claimRetry' | 'stopWatching' | 'markReactionShown'> {
  const { db } = e;
  return {
    async claimRetry(threadId: number, now: number) {
      // One statement, conditional on the state the button was shown for: of two clicks
      // (two people, two replicas) exactly one matches, and the retry hint is spent.
      const row = await db
        .updateTable('job_threads')
        .set((eb) => ({
          status: 'starting',
          error: null,
          start_retry: null,
          root_version: eb('root_version', '+', 1),
          updated_at: now,
        }))
        .where('id', '=', threadId)
        .where('status', '=', 'start_failed')
        .where('start_retry', 'is not', null)
        .where('job_id', 'is', null)
        .returningAll()
        .executeTakeFirst();
      return row && toThread(row);
    },

    async stopWatching(threadId: number, userId: string, now: number) {
      const row = await db
        .updateTable('job_threads')
        .set((eb) => ({
          unwatched_by: userId,
          next_poll_at: null,
          root_version: eb('root_version', '+', 1),
          updated_at: now,
        }))
        .where('id', '=', threadId)
        .where('status', '=', 'active')
        .where('unwatched_by', 'is', null)
        .returningAll()
        .executeTakeFirst();
      return row && toThread(row);
    },

    async markReactionShown(threadId: number, name: string | null) {
      await db
        .updateTable('job_threads')
        .set({ root_reaction: name })
        .where('id', '=', threadId)
        .execute();
    },
  };
}
