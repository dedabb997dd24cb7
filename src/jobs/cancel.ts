import type { Logger } from '../log.ts';
import type { Store } from '../store/types.ts';
import type { Wake } from './ports.ts';
import { type ButtonAnswer, type ButtonClick, clickedThread, UNKNOWN_JOB } from './retry.ts';

/**
 * "Cancel watching": the requester stops the bot from polling a job it no longer cares
 * about (the job itself runs on: the API has no cancel). The root says who stopped it. A
 * later follow-up (a thread reply or the Send follow-up button) gives the job new work, so
 * it resumes the watching: its outcome is announced again.
 */
export function createWatchControl(deps: {
  store: Pick<Store, 'getThread' | 'stopWatching'>;
  wake: Wake;
  log: Logger;
  now?: () => number;
}) {
  const log = deps.log.child({ component: 'watching' });
  const now = deps.now ?? Date.now;
  return async function stopWatching(click: ButtonClick): Promise<ButtonAnswer> {
    const { threadId, userId } = click;
    const thread = clickedThread(await deps.store.getThread(threadId), click, log);
    if (!thread) {
      log.info({ threadId, userId }, 'unwatch.unknown_thread');
      return UNKNOWN_JOB;
    }
    if (thread.userId !== userId) {
      log.info({ threadId, userId, requester: thread.userId }, 'unwatch.refused');
      return `Only <@${thread.userId}>, who asked for this job, can stop watching it.`;
    }
    const stopped = await deps.store.stopWatching(threadId, userId, now());
    if (!stopped) {
      log.info({ threadId, userId, status: thread.status }, 'unwatch.stale');
      return 'This job is not being watched any more (it has finished, or watching was cancelled already).';
    }
    log.info({ threadId, jobId: stopped.jobId, by: userId }, 'job.unwatched');
    deps.wake(); // the root says so
    return null;
  };
}
