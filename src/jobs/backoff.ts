/**
 * Poll scheduling. A job is asked at the first delay while it is fresh (just started,
 * followed up or changed: the minute people watch most closely); after that, each quiet
 * poll waits ×1.5 longer, up to the ceiling. Any change, or a follow-up, makes it fresh
 * again. Jitter keeps many jobs created together from polling in lockstep.
 */
export interface BackoffOptions {
  baseMs: number;
  maxMs: number;
  /** How long a job stays on the first delay after it started or changed; see `freshFor`. */
  freshMs?: number;
}

export const GROWTH = 1.5;
/** Jitter only shortens a delay, by 1 to 10 %. */
export const JITTER = 0.1;
const MIN_SHORTENING = 0.01;
const FRESH_MS = 60_000;
const FRESH_POLLS = 12;

/** A minute, or a dozen first delays when those are shorter (a test's fast configuration). */
export function freshFor({ baseMs, freshMs }: BackoffOptions): number {
  return freshMs ?? Math.min(FRESH_MS, FRESH_POLLS * baseMs);
}

/**
 * The next interval (`reset`: back to the first delay) and the delay actually waited. The
 * delay is never longer than its interval, so never beyond the ceiling; the last 1 % is
 * room for the poller's own lag (a claim, a busy moment) on top of it.
 */
export function nextPollDelay(
  prevMs: number,
  reset: boolean,
  { baseMs, maxMs }: BackoffOptions,
  random: () => number = Math.random,
): { intervalMs: number; delayMs: number } {
  const intervalMs = reset || prevMs <= 0 ? baseMs : Math.min(maxMs, Math.round(prevMs * GROWTH));
  const factor = 1 - MIN_SHORTENING - (JITTER - MIN_SHORTENING) * random();
  const delayMs = Math.max(1, Math.floor(intervalMs * factor));
  return { intervalMs, delayMs };
}
