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
 * distributed mode, where every workspace has its own), the analytics budget per organisation
 * (`analytics`: the environment's one organisation; `analyticsFor`: a workspace's, in
 * distributed mode).
 *
 * The service does not say which organisation a key or project belongs to, so distributed
 * mode names a workspace's organisation by the project it connected: workspaces that connect
 * the same project (the teams of an Enterprise Grid org, say) share its budget, and replacing
 * a key (rotating it) keeps the count, as the service keeps its own. Two projects of one
 * organisation are counted apart here, so the service may answer 429 before this budget is
 * spent: that is waited out or told like any 429. A hash of the key would count two keys of
 * one organisation apart as well, and would start again from zero at each rotation.
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
  const analyticsBudgets = new Map<string, Budget>();
  /** A connected workspace's organisation, named by its connected project. */
  const analyticsFor = (organisation: string): Budget => {
    let budget = analyticsBudgets.get(organisation);
    if (!budget) {
      budget = slidingWindowBudget(store, {
        key: `analytics:${organisation}`,
        limit: ANALYTICS_REQUESTS_PER_HOUR,
        windowMs: HOUR_MS,
        description: "This workspace's analytics budget (100 requests per hour)",
        now,
      });
      analyticsBudgets.set(organisation, budget);
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
    analyticsFor,
  };
}
