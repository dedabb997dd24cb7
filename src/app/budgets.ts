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
  /** One budget per name, made on first use, counted in the store as `kind:name`. */
  const perName = (kind: string, limit: number, description: string) => {
    const made = new Map<string, Budget>();
    return (name: string): Budget => {
      let budget = made.get(name);
      if (!budget) {
        const key = `${kind}:${name}`;
        budget = slidingWindowBudget(store, { key, limit, windowMs: HOUR_MS, description, now });
        made.set(name, budget);
      }
      return budget;
    };
  };
  /** A project's. */
  const agentFor = perName(
    'agent',
    AGENT_USES_PER_HOUR,
    "This project's agent budget (100 jobs and messages per hour)",
  );
  /** A connected workspace's organisation, named by its connected project. */
  const analyticsFor = perName(
    'analytics',
    ANALYTICS_REQUESTS_PER_HOUR,
    "This workspace's analytics budget (100 requests per hour)",
  );
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
