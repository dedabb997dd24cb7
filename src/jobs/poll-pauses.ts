/**
 * The poller's pauses after the service answered 429, one per project: the agent API counts
 * its limits per project (each with its key), so a project that was told to wait holds its
 * own polls and no other's; other workspaces' projects keep being polled. Bookkeeping on a
 * clock: nothing here waits.
 */
export interface PollPauses {
  /**
   * `project` was answered 429 with this wait: it pauses until then (never shorter than a
   * pause it is in). Says until when, and whether this began a pause (it was not paused).
   */
  pause(project: string, waitMs: number): { until: number; began: boolean };
  /** When `project`'s polls may go again; 0 when it is not paused. */
  until(project: string): number;
}

export function createPollPauses(now: () => number): PollPauses {
  const until = new Map<string, number>();
  const current = (project: string) => {
    const t = until.get(project) ?? 0;
    if (t > now()) return t;
    until.delete(project);
    return 0;
  };
  return {
    pause(project, waitMs) {
      const was = current(project);
      const t = Math.max(was, now() + waitMs);
      until.set(project, t);
      return { until: t, began: was === 0 };
    },
    until: current,
  };
}

/**
 * The project a thread's polls count against. A thread from before projects were kept has
 * none: it is the configured project's, kept under its own key here (its 429s pause it and
 * the other such threads together).
 */
export const projectOf = (t: { projectId: string | null }): string => t.projectId ?? '';
