import { ChatError } from '../chat-errors.ts';
import type { Logger } from '../log.ts';
import type { Scheduler } from './channel-queues.ts';

/**
 * How a job start's root message reaches Slack: in its channel's turn, at Slack's pace,
 * beside the notifier's posts (the same scheduler: src/jobs/channel-queues.ts), and again
 * after a 429's `Retry-After` rather than failing the start. A 429 pauses that channel's
 * posts only (chat.postMessage is limited per channel); other channels go on.
 */
export interface RootPacer {
  /**
   * Runs `attempt` when the channel's turn comes and resolves with what it returned;
   * `undefined` means it made no call (its turn is given back). A 429 (a ChatError with
   * `retryAfterMs`) runs it again after that wait, a few times; any other error rejects.
   * `queued` is told at once, with about how long the wait is, when that is over QUEUED_NOTE_MS.
   */
  post<T>(
    where: { teamId: string; channelId: string },
    attempt: () => Promise<T | undefined>,
    queued?: (waitMs: number) => void,
  ): Promise<T | undefined>;
}

/**
 * A wait up to this long is not worth a note: the root itself shows up about as soon. Past
 * it, the person would see nothing for longer than an answer should take, so the note goes
 * at once: at Slack's pace of a post a second per channel, the second of a burst gets one.
 */
export const QUEUED_NOTE_MS = 500;
/** 429s one root may meet before its start fails after all. */
const MAX_RATE_LIMITED = 5;
/** A Retry-After longer than this is not waited out (the recovery pass would give it up). */
const MAX_RETRY_AFTER_MS = 10_000;

/** No pacing: each attempt runs at once (tests of the service alone). */
export const unpaced: RootPacer = { post: (_where, attempt) => attempt() };

export function schedulerPacer(scheduler: Scheduler, log: Logger): RootPacer {
  const plog = log.child({ component: 'root-pacer' });
  return {
    post({ teamId, channelId }, attempt, queued) {
      const wait = scheduler.waitFor(channelId, teamId);
      if (queued && wait > QUEUED_NOTE_MS) queued(wait);
      return new Promise((resolve, reject) => {
        let limited = 0;
        const add = () =>
          scheduler.add({
            method: 'chat.postMessage',
            channelId,
            teamId,
            // An answer to a person: before the channel's announcements.
            urgent: true,
            dropped: () =>
              reject(new ChatError('shutting_down', { retryable: false, answered: true })),
            run: async () => {
              try {
                const value = await attempt();
                resolve(value);
                return value !== undefined;
              } catch (err) {
                const after = err instanceof ChatError ? err.retryAfterMs : undefined;
                if (
                  after === undefined ||
                  ++limited > MAX_RATE_LIMITED ||
                  after > MAX_RETRY_AFTER_MS
                ) {
                  reject(err);
                  return true;
                }
                scheduler.pauseChannel(channelId, after);
                plog.warn({ channelId, retryInMs: after, attempt: limited }, 'root.rate_limited');
                add();
                return true;
              }
            },
          });
        add();
      });
    },
  };
}
