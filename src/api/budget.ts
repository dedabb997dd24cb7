import { BudgetExhausted } from './errors.ts';

/**
 * A sliding-window budget kept in the store, so that it survives restarts and is shared by
 * every replica on the same database. The service documents 100 agent uses (create +
 * message) per project per hour and 100 analytics requests per organisation per hour.
 */

export interface BudgetStore {
  /** Atomically: count uses of `key` since `nowMs - windowMs`; below `limit`, record one. */
  takeBudgetSlot(
    key: string,
    nowMs: number,
    windowMs: number,
    limit: number,
  ): Promise<{ ok: true; slotId: number } | { ok: false; retryAtMs: number }>;
  /** Gives a slot back, for a request the service provably never acted on. */
  releaseBudgetSlot(slotId: number): Promise<void>;
  /** Uses of `key` recorded after `since` (read-only: a metric). */
  budgetUsed(key: string, since: number): Promise<number>;
  /** The oldest use of `key` recorded after `since`, if any (when a slot opens next). */
  oldestBudgetUse(key: string, since: number): Promise<number | null>;
}

/**
 * One use taken from a budget: counted from the moment it is taken (by every replica), given
 * back by `release` for a request that never reached the service. A caller may take one
 * ahead of the request (a reservation: a job start takes its slot before anything is
 * posted) and hand it to the request, which then counts it as its own use.
 */
export interface BudgetSlot {
  release(): Promise<void>;
}

export interface Budget {
  /**
   * Takes one slot (counted and recorded under the budget's lock: two replicas racing for
   * the last slot cannot both have it) or throws `BudgetExhausted` saying when the next opens.
   */
  take(operation: string): Promise<BudgetSlot>;
  /** Slots free in the window right now, across every replica on the database. */
  remaining(): Promise<number>;
  /** What `/agent status` shows: slots free now and, when none is, when the next one opens. */
  status(): Promise<{ limit: number; remaining: number; nextSlotAt: number | null }>;
}

export const HOUR_MS = 3_600_000;

export function slidingWindowBudget(
  store: BudgetStore,
  opts: { key: string; limit: number; windowMs: number; description: string; now?: () => number },
): Budget {
  const now = opts.now ?? Date.now;
  const remaining = async (since: number) =>
    Math.max(0, opts.limit - (await store.budgetUsed(opts.key, since)));
  return {
    async take(operation) {
      const r = await store.takeBudgetSlot(opts.key, now(), opts.windowMs, opts.limit);
      if (!r.ok)
        throw new BudgetExhausted(operation, opts.description, new Date(r.retryAtMs), opts.limit);
      let released = false;
      return {
        release: async () => {
          if (released) return;
          released = true;
          await store.releaseBudgetSlot(r.slotId);
        },
      };
    },
    remaining: () => remaining(now() - opts.windowMs),
    async status() {
      const since = now() - opts.windowMs;
      const left = await remaining(since);
      // A full window frees its next slot when its oldest use turns a window old.
      const oldest = left > 0 ? null : await store.oldestBudgetUse(opts.key, since);
      return {
        limit: opts.limit,
        remaining: left,
        nextSlotAt: oldest === null ? null : oldest + opts.windowMs,
      };
    },
  };
}
