import type { Inflight } from './inflight.ts';
import type { Logger } from './log.ts';

/**
 * What was started, to be stopped in reverse order: a part registered after another
 * depends on it, or must stop before it (taking work stops before the work is waited for).
 */
export interface Teardown {
  add(name: string, stop: () => Promise<void> | void): void;
  /** Stops every part, once however often it is called; a part that fails is logged and the rest still stop. */
  run(): Promise<void>;
}

export function createTeardown(log: Logger): Teardown {
  const parts: { name: string; stop: () => Promise<void> | void }[] = [];
  let done: Promise<void> | undefined;

  async function stopAll(): Promise<void> {
    for (const part of parts.reverse()) {
      try {
        await part.stop();
      } catch (err) {
        log.error({ err, part: part.name }, 'bot.stop_failed');
      }
    }
    log.info('bot.stopped');
    log.flush();
  }

  return {
    add(name, stop) {
      parts.push({ name, stop });
    },
    run() {
      done ??= stopAll();
      return done;
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
 * database closes, rather than fail again on a closed store.
 */
export async function settleAbandoned(inflight: Inflight, log: Logger): Promise<void> {
  if (inflight.pending === 0) return;
  const r = await inflight.drain(ABANDONED_SETTLE_MS);
  if (r.left > 0) log.warn({ left: r.left, durationMs: r.durationMs }, 'bot.drain_abandoned');
}

/** Long enough for a handler to record a failure, short enough not to matter to an orchestrator. */
const ABANDONED_SETTLE_MS = 1_000;
