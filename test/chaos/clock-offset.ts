/**
 * Preloaded into a chaos child bot (`node --import ./test/chaos/clock-offset.ts src/main.ts`)
 * to make it start "later": Date.now() and new Date() run CHAOS_CLOCK_OFFSET_MS ahead.
 * This is how a run lets minutes pass that the bot measures in wall-clock time (a start
 * interrupted 5 minutes ago, a digest claim gone stale, an hour's budget renewed) without
 * waiting them out. Timers and durations (setTimeout, performance.now) are untouched. A
 * run only ever moves the offset forward, as time does, so that no lease or claim written
 * by a later bot looks like it comes from the future.
 */
const offsetMs = Number(process.env.CHAOS_CLOCK_OFFSET_MS ?? '0');
if (Number.isFinite(offsetMs) && offsetMs !== 0) {
  const RealDate = Date;
  const realNow = RealDate.now.bind(RealDate);
  class ShiftedDate extends RealDate {
    constructor(...args: unknown[]) {
      if (args.length === 0) super(realNow() + offsetMs);
      else super(...(args as [string | number | Date]));
    }
    static override now(): number {
      return realNow() + offsetMs;
    }
  }
  globalThis.Date = ShiftedDate as DateConstructor;
}
