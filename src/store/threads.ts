import type { Kysely } from 'kysely';
import type { Engine } from './engine.ts';
import type { Database } from './schema.ts';
import { snapshotColumns, toThread, updatedOne } from './schema.ts';
import {
  CommandTakenOver,
  type JobSnapshot,
  type NewThread,
  type PollSchedule,
  type StartRetry,
  type Store,
} from './types.ts';

/** The thread ↔ job mapping: one row per job thread, keyed by (team, channel, thread ts). */
export function threadQueries(
  e: Engine,
): Pick<
  Store,
  | 'createThread'
  | 'getThread'
  | 'activeThreadsOf'
  | 'findThread'
  | 'attachJob'
  | 'startFailed'
  | 'staleStarting'
  | 'startRound'
  | 'setThreadTs'
  | 'setRootTs'
  | 'forgetStart'
> {
  const { db } = e;
  return {
    async createThread(t: NewThread, now: number) {
      const url = t.command?.responseUrl;
      if (url === undefined) return insertThread(db, t, now);
      try {
        // The command's record goes with the thread's insert, or neither does. PostgreSQL
        // does both in one statement (one round trip: this is on the way to the root post).
        if (e.kind === 'postgres')
          return await insertThread(
            db.with('taken', (qb) =>
              qb.deleteFrom('pending_commands').where('response_url', '=', url),
            ),
            t,
            now,
          );
        return await e.writeTx(async (tx) => {
          await tx.deleteFrom('pending_commands').where('response_url', '=', url).execute();
          return insertThread(tx, t, now);
        });
      } catch (err) {
        // One thread per command: another process's start of it got there first.
        if (!e.isUniqueViolation(err)) throw err;
        const started = await db
          .selectFrom('job_threads')
          .select('id')
          .where('command_url', '=', url)
          .executeTakeFirst();
        throw started ? new CommandTakenOver() : err;
      }
    },

    async getThread(id: number) {
      const row = await db
        .selectFrom('job_threads')
        .selectAll()
        .where('id', '=', id)
        .executeTakeFirst();
      return row && toThread(row);
    },

    async activeThreadsOf(teamId: string, userId: string, limit: number) {
      const rows = await db
        .selectFrom('job_threads')
        .selectAll()
        .where('team_id', '=', teamId)
        .where('user_id', '=', userId)
        .where('status', 'in', ['starting', 'active'])
        .orderBy('created_at', 'desc')
        .orderBy('id', 'desc')
        .limit(limit)
        .execute();
      return rows.map(toThread);
    },

    async findThread(teamId: string, channelId: string, threadTs: string) {
      const row = await db
        .selectFrom('job_threads')
        .selectAll()
        .where('team_id', '=', teamId)
        .where('channel_id', '=', channelId)
        .where('thread_ts', '=', threadTs)
        .executeTakeFirst();
      return row && toThread(row);
    },

    async attachJob(threadId: number, job: JobSnapshot, schedule: PollSchedule, now: number) {
      const row = await db
        .updateTable('job_threads')
        .set((eb) => ({
          ...snapshotColumns(job),
          error: null,
          next_poll_at: schedule.nextPollAt,
          poll_interval_ms: schedule.pollIntervalMs,
          root_version: eb('root_version', '+', 1),
          updated_at: now,
          changed_at: now,
        }))
        .where('id', '=', threadId)
        .returningAll()
        .executeTakeFirstOrThrow();
      return toThread(row);
    },

    async startFailed(threadId: number, error: string, now: number, retry?: StartRetry | null) {
      const row = await db
        .updateTable('job_threads')
        .set((eb) => ({
          status: 'start_failed',
          error,
          start_retry: retry ?? null,
          next_poll_at: null,
          root_version: eb('root_version', '+', 1),
          updated_at: now,
        }))
        .where('id', '=', threadId)
        .where('status', '=', 'starting')
        .returningAll()
        .executeTakeFirst();
      return row && toThread(row);
    },

    async setThreadTs(threadId: number, threadTs: string, now: number) {
      const r = await db
        .updateTable('job_threads')
        .set({ thread_ts: threadTs, updated_at: now })
        .where('id', '=', threadId)
        .where('status', '=', 'starting')
        .executeTakeFirst();
      return updatedOne(r);
    },

    async setRootTs(threadId: number, rootTs: string, now: number) {
      const r = await db
        .updateTable('job_threads')
        .set({ root_ts: rootTs, updated_at: now })
        .where('id', '=', threadId)
        .where('status', '=', 'starting')
        .where('root_ts', 'is not', null)
        .executeTakeFirst();
      return updatedOne(r);
    },

    async forgetStart(threadId: number) {
      await db
        .deleteFrom('job_threads')
        .where('id', '=', threadId)
        .where('status', '=', 'starting')
        .where('job_id', 'is', null)
        .execute();
    },

    async staleStarting(before: number) {
      const rows = await db
        .selectFrom('job_threads')
        .selectAll()
        .where('status', '=', 'starting')
        // The start's last step (recorded, root posted, or retried): a retry of an old
        // thread is not mistaken for one interrupted long ago.
        .where('updated_at', '<', before)
        .execute();
      return rows.map(toThread);
    },

    async startRound(
      threadId: number,
      snapshot: JobSnapshot,
      schedule: PollSchedule,
      now: number,
      awaitingRestart: boolean,
    ) {
      // One statement: the round moves on atomically, and a poll of the old round that is
      // still in flight is refused when it tries to record (see recordPoll).
      await db
        .updateTable('job_threads')
        .set((eb) => ({
          ...snapshotColumns(snapshot),
          round: eb('round', '+', 1),
          // A follow-up resumes the watching its requester had stopped.
          unwatched_by: null,
          follow_up_at: awaitingRestart ? now : null,
          next_poll_at: schedule.nextPollAt,
          poll_interval_ms: schedule.pollIntervalMs,
          root_version: eb('root_version', '+', 1),
          updated_at: now,
          changed_at: now,
        }))
        .where('id', '=', threadId)
        .execute();
    },
  };
}

/** Inserts a thread in the state a start records it: 'starting', no job yet. */
async function insertThread(db: Pick<Kysely<Database>, 'insertInto'>, t: NewThread, now: number) {
  const row = await db
    .insertInto('job_threads')
    .values({
      team_id: t.teamId,
      ...(t.enterpriseId ? { enterprise_id: t.enterpriseId } : {}),
      channel_id: t.channelId,
      thread_ts: t.threadTs,
      user_id: t.userId,
      prompt: t.prompt,
      project_id: t.projectId ?? null,
      root_ts: t.rootTs ?? null,
      context_messages: t.contextMessages ?? null,
      origin_url: t.origin?.url ?? null,
      origin_label: t.origin?.label ?? null,
      command_url: t.command?.responseUrl ?? null,
      ...(t.gapId === undefined ? {} : { gap_id: t.gapId }),
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
