/**
 * How long one step of grouping may hold the event loop (src/reports/turns.ts runs the steps
 * one per turn). Checking the clock costs little next to the work between two checks.
 */
export const STEP_MS = 5;

/** A function that says, at most once every `ms`, that it is time to yield. */
export function pacer(ms = STEP_MS): () => boolean {
  let since = performance.now();
  return () => {
    const now = performance.now();
    if (now - since < ms) return false;
    since = now;
    return true;
  };
}
