import type { BudgetStore } from '../api/budget.ts';

/**
 * When a failed digest run may be tried again: 1, 2, 4, 8… times the base delay (15 min by
 * default: 15, 30, 60, 120, 240, 480 min, the next past the 24 h catch-up window), counted
 * from the period's first failure. Kept in the database, so that a restart or another
 * replica waits as long as the instance that failed would have (an in-memory count would
 * start again at 15 min on each, and a second replica retakes a stale claim every 15 min).
 *
 * Each failed run of a period is one row in the store's sliding-window table (the one the
 * budgets use) under `digest-failed:<channel>:<period>`: their number and the first one's
 * time are all the schedule needs, and they leave the window on their own.
 */
export interface DigestRetries {
  /** Records a failed run of `periodKey` at `now`. */
  failed(periodKey: string, now: number): Promise<void>;
  /** Failed runs of the period so far, and when the next run may start (0: at once). */
  state(periodKey: string, now: number): Promise<{ failures: number; notBefore: number }>;
}

/** More than any period fails in its window; a bound the table needs, never reached. */
const MAX_FAILURES = 1_000;

export function storeDigestRetries(
  store: Pick<BudgetStore, 'takeBudgetSlot' | 'budgetUsed' | 'oldestBudgetUse'>,
  opts: { channelId: string; baseMs: number; windowMs: number },
): DigestRetries {
  const key = (periodKey: string) => `digest-failed:${opts.channelId}:${periodKey}`;
  return {
    async failed(periodKey, now) {
      await store.takeBudgetSlot(key(periodKey), now, opts.windowMs, MAX_FAILURES);
    },
    async state(periodKey, now) {
      const since = now - opts.windowMs;
      const failures = await store.budgetUsed(key(periodKey), since);
      if (failures === 0) return { failures, notBefore: 0 };
      const first = (await store.oldestBudgetUse(key(periodKey), since)) ?? now;
      return { failures, notBefore: first + opts.baseMs * (2 ** failures - 1) };
    },
  };
}

/**
 * A part that will not be built by trying again today (its retries spent their allowance):
 * the digest stops retrying and says why, once, where the part would have been. `message`
 * is that reason, plain and whole ("Its retries used the 40 analytics requests…").
 */
export class DigestGiveUp extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'DigestGiveUp';
  }
}
