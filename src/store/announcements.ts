import type { Kysely } from 'kysely';
import type { Engine } from './engine.ts';
import { claimThreads } from './leases.ts';
import { type Database, num, updatedOne } from './schema.ts';
import type { Announcement, Lease, Store } from './types.ts';

/** Puts an announcement into the outbox, once per key, inside the caller's transaction. */
export async function enqueue(
  tx: Kysely<Database>,
  threadId: number,
  a: Announcement,
  now: number,
): Promise<void> {
  await tx
    .insertInto('outbox')
    .values({
      thread_id: threadId,
      dedupe_key: a.key,
      kind: a.kind,
      pr_link: a.prLink,
      detail: a.detail ?? null,
      next_attempt_at: now,
      sent_at: null,
      last_error: null,
      created_at: now,
    })
    .onConflict((oc) => oc.column('dedupe_key').doNothing())
    .execute();
}

/** What the notifier works from: root messages behind their thread, and the outbox. */
export function announcementQueries(
  e: Engine,
): Pick<
  Store,
  | 'claimRootUpdates'
  | 'markRootShown'
  | 'deferRootUpdate'
  | 'pendingAnnouncements'
  | 'markAnnouncementAttempt'
  | 'markAnnouncementSent'
  | 'markAnnouncementRetry'
  | 'outboxDepth'
> {
  const { db } = e;
  return {
    claimRootUpdates(now: number, limit: number, lease: Lease) {
      return claimThreads(e, 'root', now, limit, lease);
    },

    async markRootShown(threadId: number, version: number, owner: string) {
      // Compare-and-set: a late update of an older version never moves the mark back.
      await db
        .updateTable('job_threads')
        .set({ root_shown_version: version })
        .where('id', '=', threadId)
        .where('root_shown_version', '<', version)
        .execute();
      await db
        .updateTable('job_threads')
        .set({ root_locked_by: null, root_locked_until: null })
        .where('id', '=', threadId)
        .where('root_locked_by', '=', owner)
        .execute();
    },

    async deferRootUpdate(threadId: number, owner: string, until: number) {
      await db
        .updateTable('job_threads')
        .set({ root_locked_until: until })
        .where('id', '=', threadId)
        .where('root_locked_by', '=', owner)
        .execute();
    },

    async pendingAnnouncements(now: number, limit: number) {
      const rows = await db
        .selectFrom('outbox')
        .selectAll()
        .where('sent_at', 'is', null)
        .where('next_attempt_at', '<=', now)
        .orderBy('id')
        .limit(limit)
        .execute();
      return rows.map((r) => ({
        id: num(r.id),
        threadId: num(r.thread_id),
        announcement: { key: r.dedupe_key, kind: r.kind, prLink: r.pr_link, detail: r.detail },
        attempts: num(r.attempts),
        createdAt: num(r.created_at),
      }));
    },

    async markAnnouncementAttempt(id: number, seen: number, leaseUntil: number) {
      const r = await db
        .updateTable('outbox')
        .set({ attempts: seen + 1, next_attempt_at: leaseUntil })
        .where('id', '=', id)
        .where('attempts', '=', seen)
        .where('sent_at', 'is', null)
        .executeTakeFirst();
      return updatedOne(r);
    },

    async markAnnouncementSent(id: number, attempt: number, now: number) {
      const r = await db
        .updateTable('outbox')
        .set({ sent_at: now, last_error: null })
        .where('id', '=', id)
        .where('attempts', '=', attempt)
        .executeTakeFirst();
      return updatedOne(r);
    },

    async markAnnouncementRetry(id: number, attempt: number, nextAttemptAt: number, error: string) {
      const r = await db
        .updateTable('outbox')
        .set({ next_attempt_at: nextAttemptAt, last_error: error })
        .where('id', '=', id)
        .where('attempts', '=', attempt)
        .where('sent_at', 'is', null)
        .executeTakeFirst();
      return updatedOne(r);
    },

    async outboxDepth() {
      const r = await db
        .selectFrom('outbox')
        .select((eb) => eb.fn.countAll<number | string>().as('n'))
        .where('sent_at', 'is', null)
        .executeTakeFirstOrThrow();
      return num(r.n);
    },
  };
}
