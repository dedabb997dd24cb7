import type { Budget } from '../api/budget.ts';
import { escapeAndTruncate } from '../mrkdwn.ts';
import type { Projects } from '../projects.ts';
import type { Store } from '../store/types.ts';
import { slackTime } from './failures.ts';

/** Jobs listed at most; the rest are counted. */
const SHOWN = 10;
const LABEL = { starting: 'Starting', active: 'Working' } as const;

/**
 * `/agent status`: a person's jobs still starting or running, and the agent budget (uses
 * left this hour, or when the next one opens). Plain mrkdwn for an ephemeral answer.
 */
export function createJobStatus(deps: {
  store: Pick<Store, 'activeThreadsOf'>;
  budget: (projectId: string) => Pick<Budget, 'status'>;
  projects: Pick<Projects, 'forChannel'>;
}) {
  /** The budget shown is that of the project the channel (where it was asked) uses. */
  return async function statusFor(
    teamId: string,
    channelId: string,
    userId: string,
  ): Promise<string> {
    const projectId = await deps.projects.forChannel(teamId, channelId);
    const [threads, budget] = await Promise.all([
      deps.store.activeThreadsOf(teamId, userId, SHOWN + 1),
      deps.budget(projectId).status(),
    ]);
    const lines: string[] = [];
    if (threads.length === 0) lines.push('You have no jobs in progress.');
    else {
      lines.push(
        `*Your jobs in progress* (${threads.length > SHOWN ? `${SHOWN}+` : threads.length}):`,
      );
      for (const t of threads.slice(0, SHOWN)) {
        const label = t.status === 'starting' ? LABEL.starting : LABEL.active;
        const job = t.jobId ? ` · job \`${escapeAndTruncate(t.jobId, 60)}\`` : '';
        lines.push(`• <#${t.channelId}> ${label}: _${escapeAndTruncate(t.prompt, 80)}_${job}`);
      }
    }
    if (budget.nextSlotAt === null)
      lines.push(
        `*Agent budget:* ${budget.remaining} of ${budget.limit} uses left in the last hour (jobs and follow-ups).`,
      );
    else
      lines.push(
        `*Agent budget:* all ${budget.limit} uses of the last hour are spent; the next one opens at ${slackTime(budget.nextSlotAt)}.`,
      );
    return lines.join('\n');
  };
}

export type JobStatus = ReturnType<typeof createJobStatus>;
