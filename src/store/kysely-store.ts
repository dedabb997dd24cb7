import type { Kysely } from 'kysely';
import {
  type Database,
  num,
  shownChanged,
  snapshotColumns,
  toThread,
  type WriteTx,
} from './schema.ts';
import type {
  Announcement,
  Counts,
  DigestClaim,
  JobSnapshot,
  JobThread,
  NewThread,
  OutboxItem,
  PollSchedule,
  Store,
} from './types.ts';

export type { Database, WriteTx } from './schema.ts';

/** The store's queries, written once over Kysely for every engine. */
export class KyselyStore implements Store {
  readonly #db: Kysely<Database>;
  readonly #writeTx: WriteTx;
  readonly #close: () => Promise<void>;

  constructor(db: Kysely<Database>, writeTx: WriteTx, close: () => Promise<void>) {
    this.#db = db;
    this.#writeTx = writeTx;
    this.#close = close;
  }

  async createThread(t: NewThread, now: number): Promise<JobThread> {
    const row = await this.#db
      .insertInto('job_threads')
      .values({
        team_id: t.teamId,
        channel_id: t.channelId,
        thread_ts: t.threadTs,
        user_id: t.userId,
        prompt: t.prompt,
        job_id: null,
        status: 'starting',
        model: null,
        repository: null,
        ref: null,
        pr_link: null,
        error: null,
        next_poll_at: null,
        poll_interval_ms: 0,
        created_at: now,
        updated_at: now,
      })
      .returningAll()
      .executeTakeFirstOrThrow();
    return toThread(row);
  }

  async getThread(id: number): Promise<JobThread | undefined> {
    const row = await this.#db
      .selectFrom('job_threads')
      .selectAll()
      .where('id', '=', id)
      .executeTakeFirst();
    return row && toThread(row);
  }

  async findThread(
    teamId: string,
    channelId: string,
    threadTs: string,
  ): Promise<JobThread | undefined> {
    const row = await this.#db
      .selectFrom('job_threads')
      .selectAll()
      .where('team_id', '=', teamId)
      .where('channel_id', '=', channelId)
      .where('thread_ts', '=', threadTs)
      .executeTakeFirst();
    return row && toThread(row);
  }

  async attachJob(
    threadId: number,
    job: JobSnapshot,
    schedule: PollSchedule,
    now: number,
  ): Promise<JobThread> {
    const row = await this.#db
      .updateTable('job_threads')
      .set((eb) => ({
        ...snapshotColumns(job),
        error: null,
        next_poll_at: schedule.nextPollAt,
        poll_interval_ms: schedule.pollIntervalMs,
        root_version: eb('root_version', '+', 1),
        updated_at: now,
      }))
      .where('id', '=', threadId)
      .returningAll()
      .executeTakeFirstOrThrow();
    return toThread(row);
  }

  async startFailed(threadId: number, error: string, now: number): Promise<JobThread> {
    const row = await this.#db
      .updateTable('job_threads')
      .set((eb) => ({
        status: 'start_failed',
        error,
        next_poll_at: null,
        root_version: eb('root_version', '+', 1),
        updated_at: now,
      }))
      .where('id', '=', threadId)
      .returningAll()
      .executeTakeFirstOrThrow();
    return toThread(row);
  }

  async staleStarting(before: number): Promise<JobThread[]> {
    const rows = await this.#db
      .selectFrom('job_threads')
      .selectAll()
      .where('status', '=', 'starting')
      .where('created_at', '<', before)
      .execute();
    return rows.map(toThread);
  }

  async dueJobs(now: number, limit: number): Promise<JobThread[]> {
    const rows = await this.#db
      .selectFrom('job_threads')
      .selectAll()
      .where('next_poll_at', 'is not', null)
      .where('next_poll_at', '<=', now)
      .orderBy('next_poll_at')
      .limit(limit)
      .execute();
    return rows.map(toThread);
  }

  async nextDueAt(): Promise<number | null> {
    const r = await this.#db
      .selectFrom('job_threads')
      .select((eb) => eb.fn.min('next_poll_at').as('at'))
      .executeTakeFirst();
    return r?.at == null ? null : Number(r.at);
  }

  async recordPoll(
    threadId: number,
    round: number,
    snapshot: JobSnapshot | null,
    schedule: PollSchedule,
    announcements: Announcement[],
    now: number,
  ): Promise<boolean> {
    return this.#writeTx(async (tx) => {
      const current = await tx
        .selectFrom('job_threads')
        .selectAll()
        .where('id', '=', threadId)
        .executeTakeFirst();
      // A follow-up landed while this poll was in flight: its answer belongs to the old
      // round and must not stop the new one from being watched.
      if (!current || num(current.round) !== round) return false;
      const changed = snapshot !== null && shownChanged(current, snapshot);
      await tx
        .updateTable('job_threads')
        .set((eb) => ({
          ...(snapshot ? snapshotColumns(snapshot) : {}),
          ...(snapshot?.status === 'active' ? { follow_up_at: null } : {}),
          next_poll_at: schedule.nextPollAt,
          poll_interval_ms: schedule.pollIntervalMs,
          root_version: changed ? eb('root_version', '+', 1) : eb.ref('root_version'),
          updated_at: now,
        }))
        .where('id', '=', threadId)
        .execute();
      for (const a of announcements) {
        await tx
          .insertInto('outbox')
          .values({
            thread_id: threadId,
            dedupe_key: a.key,
            kind: a.kind,
            pr_link: a.prLink,
            next_attempt_at: now,
            sent_at: null,
            last_error: null,
            created_at: now,
          })
          .onConflict((oc) => oc.column('dedupe_key').doNothing())
          .execute();
      }
      return true;
    });
  }

  async recordFollowUp(
    threadId: number,
    snapshot: JobSnapshot,
    schedule: PollSchedule,
    now: number,
    awaitingRestart: boolean,
  ): Promise<void> {
    await this.#db
      .updateTable('job_threads')
      .set((eb) => ({
        ...snapshotColumns(snapshot),
        round: eb('round', '+', 1),
        follow_up_at: awaitingRestart ? now : null,
        next_poll_at: schedule.nextPollAt,
        poll_interval_ms: schedule.pollIntervalMs,
        root_version: eb('root_version', '+', 1),
        updated_at: now,
      }))
      .where('id', '=', threadId)
      .execute();
  }

  async threadsNeedingRootUpdate(limit: number): Promise<JobThread[]> {
    const rows = await this.#db
      .selectFrom('job_threads')
      .selectAll()
      .whereRef('root_version', '>', 'root_shown_version')
      .orderBy('updated_at')
      .limit(limit)
      .execute();
    return rows.map(toThread);
  }

  async markRootShown(threadId: number, version: number): Promise<void> {
    await this.#db
      .updateTable('job_threads')
      .set({ root_shown_version: version })
      .where('id', '=', threadId)
      .where('root_shown_version', '<', version)
      .execute();
  }

  async pendingAnnouncements(now: number, limit: number): Promise<OutboxItem[]> {
    const rows = await this.#db
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
      announcement: { key: r.dedupe_key, kind: r.kind, prLink: r.pr_link },
      attempts: num(r.attempts),
      createdAt: num(r.created_at),
    }));
  }

  async markAnnouncementAttempt(id: number, seen: number, leaseUntil: number): Promise<boolean> {
    const r = await this.#db
      .updateTable('outbox')
      .set({ attempts: seen + 1, next_attempt_at: leaseUntil })
      .where('id', '=', id)
      .where('attempts', '=', seen)
      .executeTakeFirst();
    return Number(r.numUpdatedRows) === 1;
  }

  async markAnnouncementSent(id: number, now: number): Promise<void> {
    await this.#db
      .updateTable('outbox')
      .set({ sent_at: now, last_error: null })
      .where('id', '=', id)
      .execute();
  }

  async markAnnouncementRetry(id: number, nextAttemptAt: number, error: string): Promise<void> {
    await this.#db
      .updateTable('outbox')
      .set({ next_attempt_at: nextAttemptAt, last_error: error })
      .where('id', '=', id)
      .execute();
  }

  async claimEvent(keys: string[], now: number): Promise<boolean> {
    if (keys.length === 0) return true;
    const r = await this.#db
      .insertInto('slack_events')
      .values(keys.map((key) => ({ key, received_at: now })))
      .onConflict((oc) => oc.column('key').doNothing())
      .executeTakeFirst();
    return Number(r.numInsertedOrUpdatedRows ?? 0) === keys.length;
  }

  async pruneEvents(before: number): Promise<void> {
    await this.#db.deleteFrom('slack_events').where('received_at', '<', before).execute();
  }

  async takeBudgetSlot(key: string, nowMs: number, windowMs: number, limit: number) {
    return this.#writeTx(async (tx) => {
      const since = nowMs - windowMs;
      await tx
        .deleteFrom('budget_uses')
        .where('bucket', '=', key)
        .where('used_at', '<=', since)
        .execute();
      const used = await tx
        .selectFrom('budget_uses')
        .select('used_at')
        .where('bucket', '=', key)
        .orderBy('used_at')
        .execute();
      if (used.length >= limit) {
        // The window frees a slot when the oldest use in it becomes an hour old.
        const oldest = Number(used[used.length - limit]?.used_at ?? nowMs);
        return { ok: false as const, retryAtMs: oldest + windowMs };
      }
      const row = await tx
        .insertInto('budget_uses')
        .values({ bucket: key, used_at: nowMs })
        .returning('id')
        .executeTakeFirstOrThrow();
      return { ok: true as const, slotId: num(row.id) };
    });
  }

  async releaseBudgetSlot(slotId: number): Promise<void> {
    await this.#db.deleteFrom('budget_uses').where('id', '=', slotId).execute();
  }

  async getVisitorPoint(rangeKey: string): Promise<Counts | undefined> {
    const r = await this.#db
      .selectFrom('visitor_points')
      .select(['human', 'ai', 'total'])
      .where('range_key', '=', rangeKey)
      .executeTakeFirst();
    return r && { human: num(r.human), ai: num(r.ai), total: num(r.total) };
  }

  async putVisitorPoint(rangeKey: string, c: Counts, now: number): Promise<void> {
    await this.#db
      .insertInto('visitor_points')
      .values({ range_key: rangeKey, human: c.human, ai: c.ai, total: c.total, fetched_at: now })
      .onConflict((oc) => oc.column('range_key').doNothing())
      .execute();
  }

  async claimDigest(
    channelId: string,
    periodKey: string,
    owner: string,
    now: number,
    staleMs: number,
  ): Promise<DigestClaim> {
    return this.#writeTx(async (tx) => {
      const row = await tx
        .selectFrom('digest_runs')
        .selectAll()
        .where('channel_id', '=', channelId)
        .where('period_key', '=', periodKey)
        .executeTakeFirst();
      if (!row) {
        await tx
          .insertInto('digest_runs')
          .values({
            channel_id: channelId,
            period_key: periodKey,
            owner,
            claimed_at: now,
            posted_at: null,
          })
          .execute();
        return { state: 'claimed' as const };
      }
      if (row.posted_at !== null) return { state: 'posted' as const };
      if (now - num(row.claimed_at) < staleMs) return { state: 'busy' as const, owner: row.owner };
      await tx
        .updateTable('digest_runs')
        .set({ owner, claimed_at: now })
        .where('channel_id', '=', channelId)
        .where('period_key', '=', periodKey)
        .execute();
      return { state: 'stale' as const, owner: row.owner };
    });
  }

  async markDigestPosted(channelId: string, periodKey: string, now: number): Promise<void> {
    await this.#db
      .updateTable('digest_runs')
      .set({ posted_at: now })
      .where('channel_id', '=', channelId)
      .where('period_key', '=', periodKey)
      .execute();
  }

  close(): Promise<void> {
    return this.#close();
  }

  /** `select 1`: touches no table, so it is cheap enough for every readiness probe. */
  async ping(): Promise<void> {
    await this.#db.selectNoFrom((eb) => eb.lit(1).as('one')).execute();
  }

  async outboxDepth(): Promise<number> {
    const r = await this.#db
      .selectFrom('outbox')
      .select((eb) => eb.fn.countAll<number | string>().as('n'))
      .where('sent_at', 'is', null)
      .executeTakeFirstOrThrow();
    return num(r.n);
  }

  async budgetUsed(key: string, since: number): Promise<number> {
    const r = await this.#db
      .selectFrom('budget_uses')
      .select((eb) => eb.fn.countAll<number | string>().as('n'))
      .where('bucket', '=', key)
      .where('used_at', '>', since)
      .executeTakeFirstOrThrow();
    return num(r.n);
  }
}
