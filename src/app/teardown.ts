import type { Inflight } from '../inflight.ts';
import type { Logger } from '../log.ts';

/**
 * What was started, to be stopped in reverse order: a part registered after another
 * depends on it, or must stop before it (taking work stops before the work is waited for).
 */
export interface Teardown {
  add(name: string, stop: () => Promise<void> | void): void;
  /** What was still in flight, counted when the deadline passes (for its log line). */
  abandoned(count: () => Record<string, number>): void;
  /**
   * Stops every part, once however often it is called; a part that fails is logged and the
   * rest still stop. Rejects with ShutdownDeadlineError when the whole stop has not ended
   * within the deadline (the parts not finished are then left as they are).
   */
  run(): Promise<void>;
  /** Milliseconds left before the deadline of the stop under way (all of it before one). */
  remainingMs(): number;
}

/** The stop took longer than its deadline: what it left undone is in the log. */
export class ShutdownDeadlineError extends Error {
  readonly unfinished: string[];
  constructor(unfinished: string[]) {
    super(`shutdown deadline passed with ${unfinished.join(', ')} not stopped`);
    this.name = 'ShutdownDeadlineError';
    this.unfinished = unfinished;
  }
}

/**
 * The drain's share of the deadline (SHUTDOWN_TIMEOUT_MS): the work already taken gets three
 * quarters of it; the last quarter is for what follows (cutting short what still waits on
 * the API, the loops, giving leases back, the HTTP server, the database).
 */
export const DRAIN_SHARE = 0.75;

export function createTeardown(log: Logger, deadlineMs = Number.POSITIVE_INFINITY): Teardown {
  const parts: { name: string; stop: () => Promise<void> | void }[] = [];
  const counters: (() => Record<string, number>)[] = [];
  let done: Promise<void> | undefined;
  let endsAt: number | undefined;
  /** Parts not stopped yet: the one stopping first. */
  let unfinished: string[] = [];

  async function stopAll(): Promise<void> {
    const order = parts.slice().reverse();
    unfinished = order.map((p) => p.name);
    for (const part of order) {
      try {
        await part.stop();
      } catch (err) {
        log.error({ err, part: part.name }, 'bot.stop_failed');
      }
      unfinished.shift();
    }
    log.info('bot.stopped');
    log.flush();
  }

  function withDeadline(stopping: Promise<void>): Promise<void> {
    if (!Number.isFinite(deadlineMs)) return stopping;
    let timer: NodeJS.Timeout | undefined;
    const passed = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        const inFlight = Object.assign({}, ...counters.map((c) => c()));
        const left = [...unfinished];
        log.error(
          { timeoutMs: deadlineMs, unfinished: left, ...inFlight },
          'bot.shutdown_deadline',
        );
        log.flush();
        reject(new ShutdownDeadlineError(left));
      }, deadlineMs);
    });
    return Promise.race([stopping, passed]).finally(() => clearTimeout(timer));
  }

  return {
    add(name, stop) {
      parts.push({ name, stop });
    },
    abandoned(count) {
      counters.push(count);
    },
    run() {
      if (!done) {
        endsAt = performance.now() + deadlineMs;
        done = withDeadline(stopAll());
      }
      return done;
    },
    remainingMs() {
      if (endsAt === undefined) return deadlineMs;
      return Math.max(0, Math.round(endsAt - performance.now()));
    },
  };
}

/** Waits for acknowledged commands and events to finish, up to `timeoutMs`. */
export async function drainInflight(
  inflight: Inflight,
  timeoutMs: number,
  log: Logger,
): Promise<void> {
  const r = await inflight.drain(timeoutMs);
  log.info({ pending: r.pending, left: r.left, durationMs: r.durationMs }, 'bot.drain');
  if (r.left > 0) log.warn({ left: r.left, timeoutMs }, 'bot.drain_timeout');
}

/**
 * After the API client was stopped, work the drain gave up on fails fast (a typed error
 * its handler already knows how to report and record); this lets it do so before the
 * database closes, rather than fail again on a closed store. Waits `maxMs` at most.
 */
export async function settleAbandoned(
  inflight: Inflight,
  log: Logger,
  maxMs = ABANDONED_SETTLE_MS,
): Promise<void> {
  if (inflight.pending === 0) return;
  const r = await inflight.drain(Math.min(maxMs, ABANDONED_SETTLE_MS));
  if (r.left > 0) log.warn({ left: r.left, durationMs: r.durationMs }, 'bot.drain_abandoned');
}

/** Long enough for a handler to record a failure, short enough not to matter to an orchestrator. */
const ABANDONED_SETTLE_MS = 1_000;
