/**
 * How many polls the poller keeps in flight. Pure logic: the pool reports what it sees
 * (each GET's latency, how late jobs were claimed, a full pool, a 429) and asks `width()`.
 *
 * Once a window (a second) the width is reconsidered:
 * - Keeping up: Little's law, polls in flight = polls answered a second × seconds a GET
 *   takes, a fifth more for bursts, never under `floor` (claims stay batched). It narrows
 *   by a tenth a window at most: a quiet second between bursts of due jobs is no reason to
 *   drop the slots the next burst needs.
 * - Behind (the pool full, jobs claimed late): what is answered is what the pool can do,
 *   not what is due. The width grows by half each window while the lag grows and the last
 *   growth brought more answers (when it did not, the limit may be elsewhere, the bot's CPU
 *   or the database: it tries again every third window), and holds while the lag shrinks.
 * - The API's side caps it: a 429 halves the cap (AIMD), a latency well above its baseline
 *   (the lowest seen lately) cuts it by a quarter a window, so that the bot does not pile
 *   onto a struggling API; each healthy window it grows back by a tenth.
 */
export interface PollConcurrencyOptions {
  /** The ceiling (`POLL_CONCURRENCY_MAX`). */
  max: number;
  /** The width when the API is healthy and little is due (at most `max`). Default 16. */
  floor?: number;
  /** How late a claim may be before the pool counts as behind. Default 500 ms. */
  lagToleranceMs?: number;
  /** How often the width is reconsidered. Default 1 s. */
  windowMs?: number;
  now: () => number;
}

export interface PollConcurrency {
  /** How many polls may be in flight now. */
  width(): number;
  /** A GET ended (answered or failed, but not a 429) after `latencyMs`. */
  answered(latencyMs: number): void;
  /** A job was claimed `lagMs` after it fell due. */
  claimed(lagMs: number): void;
  /** A claim filled every free slot: more jobs may be due than the pool holds. */
  full(): void;
  /** The API answered 429: once per pause, not once per poll that met it. */
  rateLimited(): void;
  /** For logs and benchmarks. */
  state(): { width: number; cap: number; latencyMs: number; baselineMs: number };
}

const DEFAULT_FLOOR = 16;
/** The least the cap is cut to: a struggling API still sees the jobs most due. */
const MIN_CAP = 2;
const HEADROOM = 1.2;
const GROWTH = 1.5;
const SHRINK = 0.9;
/** A growth paid off when it brought this many times the answers. */
const PAID_OFF = 1.2;
/** Each window without growth lowers that bar, so that a noisy window does not stop growth. */
const RETRY = 0.85;
/** "Well above the baseline": this many times it, and by more than `LATENCY_SLACK_MS`. */
const CONGESTED = 2;
const LATENCY_SLACK_MS = 50;
const CONGESTION_CUT = 0.75;
const REGROWTH = 0.1;
/** How fast the baseline follows a latency that stays higher: a twentieth of the gap a window. */
const BASELINE_DRIFT = 0.05;

export function createPollConcurrency(o: PollConcurrencyOptions): PollConcurrency {
  const max = Math.max(1, Math.floor(o.max));
  const floor = Math.min(max, o.floor ?? DEFAULT_FLOOR);
  const minCap = Math.min(max, MIN_CAP);
  const lagToleranceMs = o.lagToleranceMs ?? 500;
  const windowMs = o.windowMs ?? 1_000;
  let width = floor;
  let cap = max;
  let baselineMs = Number.POSITIVE_INFINITY;
  let latencyMs = 0;
  // The current window.
  let from = o.now();
  let answers = 0;
  let latencySum = 0;
  /** The latest a job was claimed in this window and the last (0: not late). */
  let lagMs = 0;
  let lastLagMs = 0;
  /** Answers a second when the width last grew (0: not growing). */
  let grewAt = 0;
  let filled = false;
  let limited = false;

  function reconsider(): void {
    const t = o.now();
    if (t - from < windowMs) return;
    const seconds = (t - from) / 1000;
    const mean = answers > 0 ? latencySum / answers : latencyMs;
    latencyMs = mean;
    const congested =
      answers > 0 && mean > baselineMs * CONGESTED && mean > baselineMs + LATENCY_SLACK_MS;
    if (answers > 0)
      baselineMs = mean < baselineMs ? mean : baselineMs + (mean - baselineMs) * BASELINE_DRIFT;
    // A 429 cut the cap when it came; no regrowth in the window of one.
    if (!limited)
      cap = congested
        ? Math.max(minCap, Math.floor(Math.min(cap, width) * CONGESTION_CUT))
        : Math.min(max, cap + Math.max(1, Math.ceil(cap * REGROWTH)));
    const rate = answers / seconds;
    // Behind, what is answered is what the pool can do, not what is due: Little says nothing.
    const late = lagMs > lagToleranceMs && filled;
    const grow = late && lagMs >= lastLagMs && rate > grewAt * PAID_OFF;
    const want = late
      ? Math.ceil(width * (grow ? GROWTH : 1))
      : Math.max(Math.ceil(rate * (mean / 1000) * HEADROOM), Math.floor(width * SHRINK));
    grewAt = grow ? rate : late ? grewAt * RETRY : 0;
    width = Math.min(cap, Math.max(floor, want));
    lastLagMs = lagMs;
    from = t;
    answers = 0;
    latencySum = 0;
    lagMs = 0;
    filled = limited = false;
  }

  return {
    width() {
      reconsider();
      return width;
    },
    answered(ms) {
      reconsider();
      answers++;
      latencySum += ms;
    },
    claimed(ms) {
      lagMs = Math.max(lagMs, ms);
    },
    full() {
      filled = true;
    },
    rateLimited() {
      // At once, so that the pool is narrower when the pause ends.
      cap = Math.max(minCap, Math.floor(Math.min(cap, width) / 2));
      width = Math.min(width, cap);
      limited = true;
    },
    state: () => ({ width, cap, latencyMs, baselineMs }),
  };
}
