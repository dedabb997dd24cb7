import type { ApiClient } from '../api/client.ts';
import { ApiError } from '../api/errors.ts';
import type { Job } from '../api/schemas.ts';
import { ChatError, NOT_IN_CHANNEL_CODES } from '../chat-errors.ts';
import type { Logger } from '../log.ts';
import type { JobSnapshot, Store } from '../store/types.ts';
import { describeFailure } from './failures.ts';
import { type FollowUpOutcome, type JobChat, type JobMetrics, noJobMetrics } from './ports.ts';

export interface JobServiceDeps {
  store: Store;
  api: Pick<ApiClient, 'createJob' | 'sendMessage'>;
  chat: JobChat;
  log: Logger;
  poll: { intervalMs: number };
  /** Wake the poller and the notifier after a change. */
  wake: () => void;
  metrics?: JobMetrics;
  now?: () => number;
}

export interface StartRequest {
  teamId: string;
  channelId: string;
  userId: string;
  prompt: string;
}

export interface ThreadReply {
  teamId: string;
  channelId: string;
  threadTs: string;
  ts: string;
  userId: string;
  text: string;
}

export function toSnapshot(job: Job): JobSnapshot {
  return {
    jobId: job.id,
    status: job.status,
    model: job.model ?? null,
    repository: job.source?.repository ?? null,
    ref: job.source?.ref ?? null,
    prLink: job.prLink,
  };
}

/** Starting jobs and following up on them. Knows nothing of Bolt. */
export function createJobService(deps: JobServiceDeps) {
  const { store, api, chat, wake } = deps;
  const log = deps.log.child({ component: 'jobs' });
  const now = deps.now ?? Date.now;
  const metrics = deps.metrics ?? noJobMetrics;
  const firstPoll = () => ({
    nextPollAt: now() + deps.poll.intervalMs,
    pollIntervalMs: deps.poll.intervalMs,
  });

  /**
   * The root message goes first so the thread exists before the job does; if the bot
   * cannot post in the channel, no job is created. `reply` answers the requester only.
   */
  async function startJob(
    req: StartRequest,
    reply: (text: string) => Promise<void>,
  ): Promise<void> {
    const started = performance.now();
    let ts: string;
    try {
      ({ ts } = await chat.postRoot(req));
    } catch (err) {
      const code = err instanceof ChatError ? err.code : 'unknown';
      log.warn({ err, channelId: req.channelId, code }, 'job.root_post_failed');
      await reply(
        NOT_IN_CHANNEL_CODES.has(code)
          ? "I'm not a member of this channel yet, so I can't start a job here. Invite me with `/invite @Docs Agent`, then run `/agent` again."
          : `I couldn't post in this channel (${code}), so I didn't start a job. Please try again.`,
      );
      return;
    }
    const thread = await store.createThread({ ...req, threadTs: ts }, now());
    let job: Job;
    try {
      job = await api.createJob(req.prompt);
    } catch (err) {
      if (!(err instanceof ApiError)) log.error({ err, threadId: thread.id }, 'job.create_crashed');
      else
        log.warn(
          { err, threadId: thread.id, kind: err.kind, applied: err.applied },
          'job.create_failed',
        );
      await store.startFailed(thread.id, describeFailure(err, 'create'), now());
      wake();
      return;
    }
    // The job exists now: a failure to record it must not invite a second /agent. The
    // thread stays 'starting' and the next recovery pass says so in the thread; the log
    // line below (written first) keeps the job id.
    log.info({ jobId: job.id, threadId: thread.id }, 'job.accepted');
    metrics.jobCreated();
    await store.attachJob(thread.id, toSnapshot(job), firstPoll(), now());
    log.info(
      {
        jobId: job.id,
        threadId: thread.id,
        channelId: req.channelId,
        durationMs: Math.round(performance.now() - started),
      },
      'job.created',
    );
    wake();
  }

  /** A human reply in a job thread becomes a follow-up message to the job. */
  async function followUp(reply: ThreadReply): Promise<FollowUpOutcome> {
    const outcome = await sendFollowUp(reply);
    metrics.followUp(outcome);
    return outcome;
  }

  async function sendFollowUp(reply: ThreadReply): Promise<FollowUpOutcome> {
    const thread = await store.findThread(reply.teamId, reply.channelId, reply.threadTs);
    if (!thread) {
      log.debug({ channelId: reply.channelId, threadTs: reply.threadTs }, 'reply.not_a_job_thread');
      return 'ignored';
    }
    const tell = (text: string) =>
      chat.tellUser({
        channelId: reply.channelId,
        userId: reply.userId,
        threadTs: reply.threadTs,
        text,
      });
    const text = reply.text.trim();
    if (!text) {
      log.info({ threadId: thread.id }, 'reply.empty');
      await tell('I can only pass text on to the agent: reply with words, not just files.');
      return 'refused';
    }
    if (!thread.jobId || thread.status === 'lost') {
      log.info({ threadId: thread.id, status: thread.status }, 'reply.no_job');
      await tell(
        thread.status === 'lost'
          ? 'The job behind this thread no longer exists, so I did not send your message. Start a new one with `/agent`.'
          : thread.status === 'starting'
            ? 'The job is still starting, so I did not send your message. Send it again in a moment.'
            : 'This thread has no job (it did not start), so I did not send your message. Start a new one with `/agent`.',
      );
      return 'refused';
    }
    const started = performance.now();
    let job: Job;
    try {
      job = await api.sendMessage(thread.jobId, text);
    } catch (err) {
      if (!(err instanceof ApiError))
        log.error({ err, jobId: thread.jobId }, 'job.message_crashed');
      else
        log.warn(
          { err, jobId: thread.jobId, kind: err.kind, applied: err.applied },
          'job.message_failed',
        );
      if (err instanceof ApiError && err.applied === 'unknown') {
        // It may have reached the agent: watch the job as a new round, so that whatever it
        // does with the message is announced rather than missed.
        const { model, repository, ref, prLink } = thread;
        const watched: JobSnapshot = {
          jobId: thread.jobId,
          status: 'active',
          model,
          repository,
          ref,
          prLink,
        };
        await store.recordFollowUp(thread.id, watched, firstPoll(), now(), true);
        wake();
      }
      await tell(describeFailure(err, 'message'));
      return 'refused';
    }
    // The answer may still show the previous round's final status; the job has new work
    // now, so it counts as active until a poll says otherwise.
    await store.recordFollowUp(
      thread.id,
      { ...toSnapshot(job), status: 'active' },
      firstPoll(),
      now(),
      job.status !== 'active',
    );
    log.info(
      {
        jobId: thread.jobId,
        threadId: thread.id,
        durationMs: Math.round(performance.now() - started),
      },
      'job.message_sent',
    );
    wake();
    try {
      await chat.acknowledgeReply(reply.channelId, reply.ts);
    } catch (err) {
      // The message reached the job; a missing reaction is cosmetic.
      log.warn({ err, jobId: thread.jobId }, 'reply.ack_failed');
    }
    return 'sent';
  }

  return { startJob, followUp };
}

export type JobService = ReturnType<typeof createJobService>;

export const INTERRUPTED_START_MS = 5 * 60_000;

/**
 * A thread still 'starting' long after its root was posted was cut off by a crash (or a
 * store failure) between posting the root and recording the create call's answer. The job may or may not exist (the call is not
 * idempotent), so it is not resent: the person is told, in the root message.
 */
export async function recoverInterruptedStarts(
  store: Store,
  log: Logger,
  now: number,
): Promise<number> {
  let recovered = 0;
  // Older than any create call can take (timeouts and retries included), so a start still
  // in flight, in this process or another on the same database, is left alone.
  for (const t of await store.staleStarting(now - INTERRUPTED_START_MS)) {
    await store.startFailed(
      t.id,
      'I was interrupted while starting this job (a restart or a storage error), so I cannot tell whether it started. Check your pull requests before running `/agent` again.',
      now,
    );
    log.warn({ threadId: t.id, channelId: t.channelId }, 'job.start_interrupted');
    recovered++;
  }
  return recovered;
}
