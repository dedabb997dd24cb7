import { type Budget, HOUR_MS, slidingWindowBudget } from '../api/budget.ts';
import type { Config } from '../config/config.ts';
import { envWorkspace } from '../config/distribution.ts';
import type { Store } from '../store/types.ts';

/** Documented budgets of the service: per project per hour (agent), per organisation per hour (analytics). */
export const AGENT_USES_PER_HOUR = 100;
export const ANALYTICS_REQUESTS_PER_HOUR = 100;

/**
 * The documented hourly budgets, counted in the store so that replicas share them: the agent
 * budget per project (`agent` is the configured project's, the one the metrics show; none in
 * distributed mode, where every workspace has its own), the analytics budget per organisation.
 */
export function createBudgets(config: Config, store: Store, now: () => number = Date.now) {
  const agentBudgets = new Map<string, Budget>();
  const agentFor = (projectId: string): Budget => {
    let budget = agentBudgets.get(projectId);
    if (!budget) {
      budget = slidingWindowBudget(store, {
        key: `agent:${projectId}`,
        limit: AGENT_USES_PER_HOUR,
        windowMs: HOUR_MS,
        description: "This project's agent budget (100 jobs and messages per hour)",
        now,
      });
      agentBudgets.set(projectId, budget);
    }
    return budget;
  };
  const workspace = envWorkspace(config);
  return {
    agentFor,
    agent: workspace && agentFor(workspace.projectId),
    analytics: slidingWindowBudget(store, {
      key: 'analytics',
      limit: ANALYTICS_REQUESTS_PER_HOUR,
      windowMs: HOUR_MS,
      description: 'The analytics budget (100 requests per hour)',
      now,
    }),
  };
}
