/**
 * Poll scheduling. A job that keeps its status is asked less and less often (×1.5 per
 * quiet poll, up to the ceiling); any change, or a follow-up, resets to the first delay.
 * Jitter (±10 %) keeps many jobs created together from polling in lockstep.
 */
export interface BackoffOptions {
  baseMs: number;
  maxMs: number;
}

export const GROWTH = 1.5;
export const JITTER = 0.1;

export function nextPollDelay(
  prevMs: number,
  changed: boolean,
  { baseMs, maxMs }: BackoffOptions,
  random: () => number = Math.random,
): { intervalMs: number; delayMs: number } {
  const intervalMs = changed || prevMs <= 0 ? baseMs : Math.min(maxMs, Math.round(prevMs * GROWTH));
  const factor = 1 - JITTER + 2 * JITTER * random();
  const delayMs = Math.min(maxMs, Math.max(1, Math.round(intervalMs * factor)));
  return { intervalMs, delayMs };
}
