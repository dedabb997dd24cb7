import type { Clock } from '../../src/jobs/rate-limits.ts';

/** Lets pending promise callbacks and I/O (a SQLite query) run. */
export async function settle(rounds = 10): Promise<void> {
  for (let i = 0; i < rounds; i++) await new Promise<void>((r) => setImmediate(r));
}

/**
 * A clock that moves only when told: `advance` fires the timers that fall due on the way,
 * in order, letting each one's work settle before the next.
 */
export function manualClock(start = 1_000_000) {
  let t = start;
  let seq = 0;
  const timers = new Map<number, { at: number; fn: () => void }>();
  const clock: Clock = {
    now: () => t,
    setTimeout(fn, ms) {
      timers.set(++seq, { at: t + Math.max(0, ms), fn });
      return seq;
    },
    clearTimeout(handle) {
      timers.delete(handle as number);
    },
  };
  async function advance(ms: number): Promise<void> {
    const end = t + ms;
    for (;;) {
      await settle();
      const due = [...timers].filter(([, x]) => x.at <= end).sort((a, b) => a[1].at - b[1].at)[0];
      if (!due) break;
      timers.delete(due[0]);
      t = Math.max(t, due[1].at);
      due[1].fn();
    }
    t = end;
    await settle();
  }
  return { clock, advance, now: () => t };
}
