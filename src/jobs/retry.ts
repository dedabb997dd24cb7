import type { Access } from '../access.ts';
import type { Budget } from '../api/budget.ts';
import type { Logger } from '../log.ts';
import type { JobThread, Store } from '../store/types.ts';
import { clockTime } from './failures.ts';
import type { Wake } from './ports.ts';
import type { JobService } from './service.ts';

/**
 * The workspace a click or a form was authorized for: its team, and its org when the
 * install that answered is org-wide (it serves every team of the org).
 */
export interface RequestWorkspace {
  teamId: string;
  enterpriseId?: string | undefined;
  orgWide?: boolean | undefined;
}

/** Who clicked which button, on which thread, as the chat side read it from the payload. */
export interface ButtonClick extends RequestWorkspace {
  threadId: number;
  channelId: string;
  userId: string;
}

/**
 * Whether a stored thread is the requesting workspace's: the same team, or a team of the org
 * an org-wide install serves. A button or form naming another workspace's thread (its id is
 * a number anyone can write) acts on nothing there.
 */
export function ofWorkspace(
  thread: Pick<JobThread, 'teamId' | 'enterpriseId'>,
  ws: RequestWorkspace,
): boolean {
  if (thread.teamId === ws.teamId) return true;
  return ws.orgWide === true && !!ws.enterpriseId && thread.enterpriseId === ws.enterpriseId;
}

/** The thread a click names, if it is of the click's workspace and conversation. */
export function clickedThread(
  thread: JobThread | undefined,
  click: ButtonClick,
  log: Logger,
): JobThread | undefined {
  if (!thread || thread.channelId !== click.channelId) return undefined;
  if (ofWorkspace(thread, click)) return thread;
  // Ids only: the person is told the job is unknown, as for one that does not exist.
  log.warn(
    {
      surface: 'action',
      reason: 'other_workspace',
      threadId: thread.id,
      userId: click.userId,
      teamId: click.teamId,
      claimedTeamId: thread.teamId,
    },
    'workspace.refused',
  );
  return undefined;
}

/** What to tell the person who clicked (only them); null when the root message says it. */
export type ButtonAnswer = string | null;

const RETRIED = 'This job was retried already (see its status above).';

export const UNKNOWN_JOB =
  "I can't find the job behind this button any more (it may have been removed). Start a new one with `/agent`.";

/**
 * The Retry button on a start that failed for a reason a retry can fix. The same thread
 * starts again (same root, Starting → Working…) through the start's own create path,
 * budget included. One click, one job: the thread is claimed back to 'starting' by one
 * conditional write, so a double click, two people, or two replicas start it once. Anyone
 * who can see the button may click it: it re-sends the requester's own prompt, so the
 * requester must still be allowed (ALLOWED_USERS, ALLOWED_CHANNELS on the stored channel):
 * someone removed from the list cannot have their job run by someone still on it.
 */
export function createRetries(deps: {
  store: Pick<Store, 'getThread' | 'claimRetry'>;
  jobs: Pick<JobService, 'create'>;
  /** The agent budget of a thread's project (null: the configured one). */
  budget?: (projectId: string | null) => Pick<Budget, 'status'>;
  /** Whether the job's requester may still use the bot in its channel. */
  access: Pick<Access, 'isAllowed'>;
  wake: Wake;
  log: Logger;
  now?: () => number;
}) {
  const log = deps.log.child({ component: 'retry' });
  const now = deps.now ?? Date.now;
  return async function retry(click: ButtonClick): Promise<ButtonAnswer> {
    const { threadId, userId } = click;
    const thread = clickedThread(await deps.store.getThread(threadId), click, log);
    if (!thread) {
      log.info({ threadId, userId }, 'retry.unknown_thread');
      return UNKNOWN_JOB;
    }
    if (!deps.access.isAllowed(thread.userId, thread.channelId)) {
      log.info({ threadId, userId, requester: thread.userId }, 'retry.requester_refused');
      return `<@${thread.userId}>, who asked for this job, may no longer use me here, so I did not retry it. Start your own with \`/agent\`.`;
    }
    if (thread.status !== 'start_failed' || !thread.startRetry) {
      log.info({ threadId, userId, status: thread.status }, 'retry.stale');
      return thread.status === 'start_failed'
        ? 'A retry cannot fix why this job did not start; see the message above. Start a new one with `/agent`.'
        : RETRIED;
    }
    // Told at once, only to the person, rather than flipping the root to Starting and back.
    const budget = await deps.budget?.(thread.projectId).status();
    if (budget && budget.remaining === 0 && budget.nextSlotAt !== null) {
      log.info({ threadId, userId }, 'retry.budget_spent');
      return `This project's agent budget (100 jobs and messages per hour) is used up, so I did not retry. The next slot opens at ${clockTime(new Date(budget.nextSlotAt))}.`;
    }
    const claimed = await deps.store.claimRetry(threadId, now());
    if (!claimed) {
      log.info({ threadId, userId }, 'retry.already_claimed');
      return RETRIED;
    }
    log.info({ threadId, by: userId, requester: thread.userId }, 'job.retry_claimed');
    deps.wake(); // the root shows Starting again
    await deps.jobs.create(claimed);
    return null;
  };
}
