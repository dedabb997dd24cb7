import { type CallOutcome, storeWithDeadline } from '../store/deadline.ts';
import { backgroundStore } from '../store/pool-gate.ts';
import type { Store } from '../store/types.ts';

/** A loop is stalled after this many of its intervals without an answer from its store. */
export const STALLED_AFTER_INTERVALS = 3;

/**
 * The background loops' view of the database: each loop gets its own store, whose calls
 * end within `deadlineMs` (a loop whose call does not answer gives up and runs again
 * later), and whose answers are its sign of life. A loop is stalled when its store was
 * asked and has not answered for 3 of its intervals (an interval is never counted shorter
 * than the deadline); `/readyz` names it.
 */
export interface Liveness {
  loopStore(name: string, intervalMs: number): Store;
  /** Loops stalled now, by name. */
  stalled(): string[];
  /** A shutdown began: every loop's store call ends within `ms` from now. */
  shorten(ms: number): void;
}

export function createLiveness(store: Store, opts: { deadlineMs: number }): Liveness {
  const loops = new Map<string, { intervalMs: number; lastAnswer: number; failing: boolean }>();
  const shorteners: ((ms: number) => void)[] = [];
  return {
    loopStore(name, intervalMs) {
      const state = { intervalMs, lastAnswer: Date.now(), failing: false };
      loops.set(name, state);
      const watch = (outcome: CallOutcome) => {
        if (outcome === 'answered') {
          state.lastAnswer = Date.now();
          state.failing = false;
        } else state.failing = true;
      };
      // Nobody waits on a loop's answer: its queries go behind a person's (pool-gate.ts).
      const bounded = storeWithDeadline(backgroundStore(store), opts.deadlineMs, watch);
      shorteners.push(bounded.shorten);
      return bounded.store;
    },
    stalled() {
      const now = Date.now();
      return [...loops]
        .filter(([, s]) => {
          const interval = Math.max(s.intervalMs, opts.deadlineMs);
          return s.failing && now - s.lastAnswer > STALLED_AFTER_INTERVALS * interval;
        })
        .map(([name]) => name);
    },
    shorten(ms) {
      for (const shorten of shorteners) shorten(ms);
    },
  };
}
