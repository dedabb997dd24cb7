import type { Generated, Kysely, Selectable, Transaction } from 'kysely';
import type {
  Announcement,
  AnnouncementKind,
  Counts,
  DigestClaim,
  JobSnapshot,
  JobThread,
  NewThread,
  OutboxItem,
  PollSchedule,
  Store,
  ThreadStatus,
} from './types.ts';

/** Row types as the database holds them. */
export interface Database {
  job_threads: {
    id: Generated<number>;
    team_id: string;
    channel_id: string;
    thread_ts: string;
    user_id: string;
    prompt: string;
    job_id: string | null;
    status: ThreadStatus;
    model: string | null;
    repository: string | null;
    ref: string | null;
    pr_link: string | null;
    error: string | null;
    round: Generated<number>;
    root_version: Generated<number>;
    root_shown_version: Generated<number>;
    next_poll_at: number | null;
    poll_interval_ms: number;
    created_at: number;
    updated_at: number;
  };
  outbox: {
    id: Generated<number>;
    thread_id: number;
    dedupe_key: string;
    kind: AnnouncementKind;
    pr_link: string | null;
    attempts: Generated<number>;
    next_attempt_at: number;
    sent_at: number | null;
    last_error: string | null;
    created_at: number;
  };
  slack_events: { key: string; received_at: number };
  budget_uses: { id: Generated<number>; bucket: string; used_at: number };
  visitor_points: {
    range_key: string;
    human: number;
    ai: number;
    total: number;
    fetched_at: number;
  };
  digest_runs: {
    channel_id: string;
    period_key: string;
    owner: string;
    claimed_at: number;
    posted_at: number | null;
  };
}

export type Db = Kysely<Database>;
/** Runs `fn` in a transaction that holds the write lock from its first statement. */
export type WriteTx = <T>(fn: (tx: Transaction<Database>) => Promise<T>) => Promise<T>;

type ThreadRow = Selectable<Database['job_threads']>;

// Some drivers hand back BIGINT as a string; every number we store fits a double.
const num = (v: number | string): number => Number(v);
const numOrNull = (v: number | string | null): number | null => (v === null ? null : Number(v));

function toThread(r: ThreadRow): JobThread {
  return {
    id: num(r.id),
    teamId: r.team_id,
    channelId: r.channel_id,
    threadTs: r.thread_ts,
    userId: r.user_id,
    prompt: r.prompt,
    jobId: r.job_id,
    status: r.status,
    model: r.model,
    repository: r.repository,
    ref: r.ref,
    prLink: r.pr_link,
    error: r.error,
    round: num(r.round),
    rootVersion: num(r.root_version),
    rootShownVersion: num(r.root_shown_version),
    nextPollAt: numOrNull(r.next_poll_at),
    pollIntervalMs: num(r.poll_interval_ms),
    createdAt: num(r.created_at),
    updatedAt: num(r.updated_at),
  };
}

function snapshotColumns(s: JobSnapshot) {
  return {
    job_id: s.jobId,
    status: s.status,
    model: s.model,
    repository: s.repository,
    ref: s.ref,
    pr_link: s.prLink,
  };
}

/** What the root message shows; a change in any of these needs a `chat.update`. */
function shownChanged(t: ThreadRow, s: JobSnapshot): boolean {
  return (
    t.status !== s.status ||
    t.pr_link !== s.prLink ||
    t.model !== s.model ||
    t.repository !== s.repository ||
    t.ref !== s.ref
  );
}

/** The store's queries, written once over Kysely for every engine. */
export class KyselyStore implements Store {
  readonly #db: Db;
  readonly #writeTx: WriteTx;
  readonly #close: () => Promise<void>;

  constructor(db: Db, writeTx: WriteTx, close: () => Promise<void>) {
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
    snapshot: JobSnapshot | null,
    schedule: PollSchedule,
    announcements: Announcement[],
    now: number,
  ): Promise<void> {
    await this.#writeTx(async (tx) => {
      const current = await tx
        .selectFrom('job_threads')
        .selectAll()
        .where('id', '=', threadId)
        .executeTakeFirst();
      if (!current) return;
      const changed = snapshot !== null && shownChanged(current, snapshot);
      await tx
        .updateTable('job_threads')
        .set((eb) => ({
          ...(snapshot ? snapshotColumns(snapshot) : {}),
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
    });
  }

  async recordFollowUp(
    threadId: number,
    snapshot: JobSnapshot,
    schedule: PollSchedule,
    now: number,
  ): Promise<void> {
    await this.#db
      .updateTable('job_threads')
      .set((eb) => ({
        ...snapshotColumns(snapshot),
        round: eb('round', '+', 1),
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

  async markAnnouncementAttempt(id: number, _now: number): Promise<void> {
    await this.#db
      .updateTable('outbox')
      .set((eb) => ({ attempts: eb('attempts', '+', 1) }))
      .where('id', '=', id)
      .execute();
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
}
