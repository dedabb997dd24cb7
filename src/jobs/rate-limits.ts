/**
 * Slack's rate limits as the notifier keeps them, as bookkeeping on a clock: nothing here
 * waits, it only says when something may go. Slack's own words: chat.postMessage allows
 * about one message a second per channel (short bursts tolerated); chat.update is Tier 3,
 * about 50 a minute per workspace (bursts tolerated); a 429 carries `Retry-After`, and
 * limits are counted per method.
 */

/** What the notifier's limits run on; tests drive it by hand. */
export interface Clock {
  now(): number;
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

export const systemClock: Clock = {
  now: Date.now,
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (handle) => clearTimeout(handle as NodeJS.Timeout),
};

export interface BucketLimit {
  perMinute: number;
  /** How many may go at once after a quiet spell. */
  burst: number;
}

/** chat.update's budget: Tier 3, under Slack's burst so that a burst of ours is never refused. */
export const TIER_3: BucketLimit = { perMinute: 50, burst: 5 };

export interface TokenBucket {
  /**
   * Takes a token if more than `reserve` are left: ordinary work leaves the last tokens to
   * urgent work, which passes `0`. False when there is none to take.
   */
  take(reserve?: number): boolean;
  /** Gives back a token taken for a call that was not made after all. */
  refund(): void;
  /** When `take(reserve)` will succeed (now, if it would now). */
  readyAt(reserve?: number): number;
}

/** A bucket of `burst` tokens, refilled continuously at `perMinute`. */
export function tokenBucket(limit: BucketLimit, now: () => number): TokenBucket {
  const perMs = limit.perMinute / 60_000;
  let tokens = limit.burst;
  let at = now();
  const refill = () => {
    const t = now();
    tokens = Math.min(limit.burst, tokens + (t - at) * perMs);
    at = t;
  };
  return {
    take(reserve = 0) {
      refill();
      if (tokens < 1 + reserve) return false;
      tokens -= 1;
      return true;
    },
    refund() {
      refill();
      tokens = Math.min(limit.burst, tokens + 1);
    },
    readyAt(reserve = 0) {
      refill();
      const missing = 1 + Math.min(reserve, limit.burst - 1) - tokens;
      return missing <= 0 ? at : at + Math.ceil(missing / perMs);
    },
  };
}

/** The pauses 429s asked for, per method: one method's pause holds no other. */
export function methodPauses(now: () => number) {
  const until = new Map<string, number>();
  return {
    pause(method: string, ms: number): void {
      until.set(method, Math.max(until.get(method) ?? 0, now() + ms));
    },
    /** When `method` may be called again; 0 when it is not paused. */
    until(method: string): number {
      const t = until.get(method) ?? 0;
      if (t > now()) return t;
      until.delete(method);
      return 0;
    },
  };
}

/** Posts in one channel go at least `gapMs` apart, counted from the start of each. */
export function channelPace(gapMs: number, now: () => number) {
  const last = new Map<string, number>();
  return {
    /** When the channel may take its next post. */
    readyAt(channel: string): number {
      const t = last.get(channel);
      return t === undefined ? 0 : t + gapMs;
    },
    /** A post starts now; returns what takes it back (the post was not made after all). */
    started(channel: string): () => void {
      const before = last.get(channel);
      last.set(channel, now());
      return () => {
        if (before === undefined) last.delete(channel);
        else last.set(channel, before);
      };
    },
    /** Forgets channels whose gap has passed: they are free again either way. */
    prune(): void {
      const t = now();
      for (const [channel, at] of last) if (at + gapMs <= t) last.delete(channel);
    },
  };
}
