import type { ApiClient } from '../api/client.ts';
import { ApiError } from '../api/errors.ts';
import type { Job } from '../api/schemas.ts';
import type { Logger } from '../log.ts';
import { escapeMrkdwn } from '../mrkdwn.ts';
import type {
  Announcement,
  FollowUp,
  JobSnapshot,
  JobThread,
  PollSchedule,
  Store,
} from '../store/types.ts';
import { withDeadline } from './deadline.ts';
import { describeFailure } from './failures.ts';
import type { FollowUpOutcome, JobChat, JobMetrics, Wake } from './ports.ts';
import { docsWorkspaceOf, toSnapshot } from './snapshot.ts';

export interface ThreadReply {
  teamId: string;
  channelId: string;
  threadTs: string;
  ts: string;
  userId: string;
  text: string;
}

interface FollowUpDeps {
  store: Store;
  api: Pick<ApiClient, 'sendMessage'>;
  chat: JobChat;
  log: Logger;
  wake: Wake;
  now: () => number;
  deadlineMs: number;
  firstPoll: () => PollSchedule;
  metrics: JobMetrics;
}

/**
 * A human reply in a job thread becomes a follow-up message to the job. The reply is
 * recorded before it is sent and its outcome after, so that a crash in between is found by
 * the recovery pass: sent then if it never left, reported in the thread if it may have.
 */
export function createFollowUps(deps: FollowUpDeps) {
  const { store, api, chat, log, wake, now } = deps;
  const counted = async (outcome: Promise<FollowUpOutcome>) => {
    deps.metrics.followUp(await outcome);
    return outcome;
  };

  /**
   * Records a reply in a job thread before Slack is told it arrived (the ack): from then on
   * it cannot be lost. Once per reply, however often Slack delivers it (`eventKeys`).
   */
  async function recordReply(reply: ThreadReply, eventKeys: string[]): Promise<void> {
    const thread = await store.findThread(reply.teamId, reply.channelId, reply.threadTs);
    if (thread) await record(thread, reply, eventKeys);
  }

  /**
   * After the ack: sends the reply recorded before it (or records it now, if it was not),
   * unless it was handled already.
   */
  function deliverReply(reply: ThreadReply, eventKeys: string[]): Promise<FollowUpOutcome> {
    return counted(
      (async () => {
        const thread = await store.findThread(reply.teamId, reply.channelId, reply.threadTs);
        if (!thread) {
          log.debug(
            { channelId: reply.channelId, threadTs: reply.threadTs },
            'reply.not_a_job_thread',
          );
          return 'ignored';
        }
        const f =
          (await store.findFollowUp(replyKey(reply.channelId, reply.ts))) ??
          (await record(thread, reply, eventKeys));
        if (f?.state !== 'received') return 'duplicate';
        return send(thread, f);
      })(),
    );
  }

  async function record(
    thread: JobThread,
    reply: ThreadReply,
    eventKeys: string[],
  ): Promise<FollowUp | undefined> {
    const followUp = await store.recordFollowUp(
      {
        threadId: thread.id,
        replyKey: replyKey(reply.channelId, reply.ts),
        replyTs: reply.ts,
        userId: reply.userId,
        text: reply.text.trim(),
      },
      eventKeys,
      now(),
    );
    if (!followUp)
      log.info({ channelId: reply.channelId, ts: reply.ts, eventKeys }, 'event.duplicate');
    return followUp;
  }

  /** Sends a recorded follow-up (the recovery pass's way in), unless one already took it on. */
  function deliver(thread: JobThread, f: FollowUp): Promise<FollowUpOutcome> {
    return counted(send(thread, f));
  }

  async function send(thread: JobThread, f: FollowUp): Promise<FollowUpOutcome> {
    const tell = (text: string) =>
      chat.tellUser(thread, {
        channelId: thread.channelId,
        userId: f.userId,
        threadTs: thread.threadTs,
        text,
      });
    const refuse = async (why: string, text: string): Promise<FollowUpOutcome> => {
      // Conditional, like the send below: a redelivery racing this one tells nobody twice.
      if (!(await store.moveFollowUp(f.id, ['received'], 'refused', now()))) return 'duplicate';
      log.info({ threadId: thread.id, status: thread.status, why }, 'reply.refused');
      await tell(text);
      return 'refused';
    };
    if (!f.text)
      return refuse(
        'empty',
        'I can only pass text on to the agent: reply with words, not just files.',
      );
    if (!thread.jobId || thread.status === 'lost')
      return refuse(
        'no_job',
        thread.status === 'lost'
          ? 'The job behind this thread no longer exists, so I did not send your message. Start a new one with `/agent`.'
          : thread.status === 'starting'
            ? 'The job is still starting, so I did not send your message. Send it again in a moment.'
            : 'This thread has no job (it did not start), so I did not send your message. Start a new one with `/agent`.',
      );
    // From here the message may leave: a crash past this point is reported, never resent.
    if (!(await store.moveFollowUp(f.id, ['received'], 'sending', now()))) return 'ignored';
    const jobId = thread.jobId;
    const started = performance.now();
    let job: Job;
    try {
      job = await withDeadline('job.message', deps.deadlineMs, (signal) =>
        api.sendMessage(jobId, f.text, {
          signal,
          project: thread.projectId ?? undefined,
          workspace: docsWorkspaceOf(thread),
        }),
      );
    } catch (err) {
      return failed(thread, f, err);
    }
    // The answer may still show the previous round's final status; the job has new work
    // now, so it counts as active until a poll says otherwise.
    const schedule = deps.firstPoll();
    await store.startRound(
      thread.id,
      { ...toSnapshot(job), status: 'active' },
      schedule,
      now(),
      job.status !== 'active',
    );
    await store.moveFollowUp(f.id, ['sending'], 'sent', now());
    log.info(
      { jobId, threadId: thread.id, durationMs: Math.round(performance.now() - started) },
      'job.message_sent',
    );
    wake(schedule.nextPollAt ?? undefined);
    try {
      // A reply gets a reaction; a follow-up sent from the form has no message to react to,
      // so its author is told in the thread instead.
      if (f.replyTs) await chat.acknowledgeReply(thread, thread.channelId, f.replyTs);
      else
        await tell(`:eyes: I sent your follow-up to the agent: "${escapeMrkdwn(excerpt(f.text))}"`);
    } catch (err) {
      // The message reached the job; a missing reaction is cosmetic.
      log.warn({ err, jobId }, 'reply.ack_failed');
    }
    return 'sent';
  }

  async function failed(thread: JobThread, f: FollowUp, err: unknown): Promise<FollowUpOutcome> {
    const jobId = thread.jobId;
    if (!(err instanceof ApiError)) log.error({ err, jobId }, 'job.message_crashed');
    else log.warn({ err, jobId, kind: err.kind, applied: err.applied }, 'job.message_failed');
    if (err instanceof ApiError && err.applied === 'no') {
      // Provably not sent: only the author needs to know, with what to do about it.
      await store.moveFollowUp(f.id, ['sending'], 'refused', now());
      await chat.tellUser(thread, {
        channelId: thread.channelId,
        userId: f.userId,
        threadTs: thread.threadTs,
        text: describeFailure(err, 'message'),
      });
      return 'refused';
    }
    // It may have reached the agent: the thread is told (everyone there may be waiting on
    // it), and the job is watched as a new round, so whatever it does is announced.
    const why = err instanceof ApiError ? err.message : 'an unexpected error';
    if (
      await store.followUpUncertain(f, uncertainNotice(f, `I could not confirm it: ${why}`), now())
    ) {
      const schedule = deps.firstPoll();
      await watchAgain(store, thread, schedule, now());
      wake(schedule.nextPollAt ?? undefined);
    }
    return 'uncertain';
  }

  return { recordReply, deliverReply, deliver };
}

const replyKey = (channelId: string, ts: string) => `${channelId}:${ts}`;

/**
 * The thread's notice that a reply may or may not have reached the agent; keyed by the
 * reply, so it is posted once however the uncertainty came about.
 */
function excerpt(text: string): string {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length > 120 ? `${line.slice(0, 119)}…` : line;
}

export function uncertainNotice(f: FollowUp, why: string): Announcement {
  return {
    key: `reply:${f.replyKey}:uncertain`,
    kind: 'notice',
    prLink: null,
    detail: `I cannot tell whether this reply reached the agent ("${excerpt(f.text)}"): ${why}. Check the job before sending it again.`,
  };
}

/** A follow-up may have reached the job: a new round, watched until seen active again. */
export async function watchAgain(
  store: Pick<Store, 'startRound'>,
  thread: JobThread,
  schedule: PollSchedule,
  now: number,
): Promise<void> {
  if (!thread.jobId) return;
  const { model, repository, ref, prLink } = thread;
  const watched: JobSnapshot = {
    jobId: thread.jobId,
    status: 'active',
    model,
    repository,
    ref,
    prLink,
  };
  await store.startRound(thread.id, watched, schedule, now, true);
}
