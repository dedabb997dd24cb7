import type { Kysely } from 'kysely';
import type { Engine } from './engine.ts';
import { claimThread, dueAndFree, turnOfTeam } from './leases.ts';
import { type Database, num, toThread, updatedOne } from './schema.ts';
import type { Announcement, Lease, OutboxFilter, Store } from './types.ts';

/** An announcement on its way into the outbox. */
export interface Queued {
  threadId: number;
  announcement: Announcement;
  now: number;
}

/** Puts an announcement into the outbox, once per key, inside the caller's transaction. */
export async function enqueue(
  tx: Kysely<Database>,
  threadId: number,
  a: Announcement,
  now: number,
): Promise<void> {
  await enqueueMany(tx, [{ threadId, announcement: a, now }]);
}

/**
 * Puts announcements into the outbox in one INSERT (a few for thousands), in their order,
 * once per key, in the caller's transaction. A key repeated within the INSERT is skipped
 * by ON CONFLICT as one already stored is: the first wins, as one at a time would.
 */
export async function enqueueMany(tx: Kysely<Database>, items: readonly Queued[]): Promise<void> {
  const rows = items.map(({ threadId, announcement: a, now }) => ({
    thread_id: threadId,
    dedupe_key: a.key,
    kind: a.kind,
    pr_link: a.prLink,
    detail: a.detail ?? null,
    next_attempt_at: now,
    sent_at: null,
    last_error: null,
    created_at: now,
  }));
  // 9 bound parameters a row: 500 rows stay well under either engine's bound.
  for (let i = 0; i < rows.length; i += 500)
    await tx
      .insertInto('outbox')
      .values(rows.slice(i, i + 500))
      .onConflict((oc) => oc.column('dedupe_key').doNothing())
      .execute();
}

/** What the notifier works from: root messages behind their thread, and the outbox. */
export function announcementQueries(
  e: Engine,
): Pick<
  Store,
  | 'pendingRootUpdates'
  | 'claimRootUpdate'
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
    async pendingRootUpdates(
      now: number,
      limit: number,
      skipIds: readonly number[] = [],
      skipTeams: readonly string[] = [],
    ) {
      // Answers to people first (a root's first edit, a refused start), then workspaces in
      // turn (turnOfTeam), the oldest change first within a turn.
      const turns = db
        .selectFrom('job_threads')
        .selectAll()
        .select((eb) =>
          eb
            .case()
            .when(eb.or([eb('root_shown_version', '=', 1), eb('status', '=', 'start_failed')]))
            .then(0)
            .else(1)
            .end()
            .as('answers_later'),
        )
        .where(dueAndFree('root', now))
        .$if(skipIds.length > 0, (q) => q.where('id', 'not in', skipIds))
        .$if(skipTeams.length > 0, (q) => q.where('team_id', 'not in', skipTeams))
        .as('pending');
      const rows = await db
        .selectFrom(turns)
        .selectAll()
        .select(turnOfTeam('answers_later', 'updated_at', 'id').as('turn'))
        .orderBy('answers_later')
        .orderBy('turn')
        .orderBy('updated_at')
        .orderBy('id')
        .limit(limit)
        .execute();
      return rows.map(toThread);
    },

    claimRootUpdate(threadId: number, now: number, lease: Lease) {
      return claimThread(e, 'root', threadId, now, lease);
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

    async pendingAnnouncements(now: number, limit: number, filter: OutboxFilter = {}) {
      const { kinds, skipIds = [], skipChannels = [], skipTeams = [] } = filter;
      if (kinds?.length === 0) return [];
      // Workspaces in turn (turnOfTeam): each one's oldest first, then each one's next.
      const turns = db
        .selectFrom('outbox')
        .innerJoin('job_threads', 'job_threads.id', 'outbox.thread_id')
        .selectAll('outbox')
        .select(['job_threads.channel_id', 'job_threads.team_id'])
        .select(turnOfTeam('outbox.id').as('turn'))
        .where('outbox.sent_at', 'is', null)
        .where('outbox.next_attempt_at', '<=', now)
        .$if(kinds !== undefined, (q) => q.where('outbox.kind', 'in', kinds ?? []))
        .$if(skipIds.length > 0, (q) => q.where('outbox.id', 'not in', skipIds))
        .$if(skipChannels.length > 0, (q) =>
          q.where('job_threads.channel_id', 'not in', skipChannels),
        )
        .$if(skipTeams.length > 0, (q) => q.where('job_threads.team_id', 'not in', skipTeams))
        .as('pending');
      const rows = await db
        .selectFrom(turns)
        .selectAll()
        .orderBy('turn')
        .orderBy('id')
        .limit(limit)
        .execute();
      return rows.map((r) => ({
        id: num(r.id),
        threadId: num(r.thread_id),
        channelId: r.channel_id,
        teamId: r.team_id,
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
