import type { Logger } from './log.ts';
import type { Store } from './store/types.ts';

/**
 * The one clock replicas share: the database server's. Leases, staleness (an interrupted
 * start, a follow-up left sending, a digest claim) and budget windows are stamped and judged
 * in epoch ms on it, so that a replica whose clock runs fast does not take over another's
 * live lease or free a budget slot early.
 *
 * Reading the server's clock on every call would add a round trip to each; instead the
 * offset between this process's clock and the server's is measured (the fastest of a few
 * round trips, halved) at start and every `everyMs` after, and `now()` is the process's clock
 * plus that offset. On SQLite the database is a file on this machine: the offset is 0.
 */
export interface DatabaseClock {
  /** Epoch ms on the database's clock. */
  now(): number;
  /** How far the database's clock runs ahead of this process's (ms). */
  offsetMs(): number;
  stop(): void;
}

const SAMPLES = 3;
/** A change of the offset by more than this is logged. */
const NOTEWORTHY_MS = 1_000;

export async function startDatabaseClock(deps: {
  store: Pick<Store, 'databaseTime'>;
  log: Logger;
  everyMs: number;
  /** This process's clock (tests run a replica whose clock is off). */
  local?: () => number;
}): Promise<DatabaseClock> {
  const local = deps.local ?? Date.now;
  const log = deps.log.child({ component: 'clock' });
  let offset = 0;
  let logged: number | null = null;

  /** The offset from the fastest of a few round trips; null when the database has no clock of its own. */
  async function sample(): Promise<{ offset: number; rttMs: number } | null> {
    let best: { offset: number; rttMs: number } | null = null;
    for (let i = 0; i < SAMPLES; i++) {
      const sent = local();
      const server = await deps.store.databaseTime();
      const back = local();
      if (server === null || !Number.isFinite(server)) return null;
      const rttMs = back - sent;
      if (!best || rttMs < best.rttMs) best = { offset: server - (sent + back) / 2, rttMs };
    }
    return best;
  }

  async function measure(): Promise<boolean> {
    const found = await sample();
    if (!found) return false;
    offset = Math.round(found.offset);
    if (logged === null || Math.abs(offset - logged) > NOTEWORTHY_MS) {
      log.info({ offsetMs: offset, rttMs: found.rttMs }, 'clock.offset');
      logged = offset;
    }
    return true;
  }

  let timer: NodeJS.Timeout | undefined;
  let measuring = false;
  if (await measure()) {
    timer = setInterval(() => {
      if (measuring) return;
      measuring = true;
      // A failed measure keeps the last offset: clocks drift by milliseconds an hour.
      measure()
        .catch((err: unknown) => log.warn({ err }, 'clock.measure_failed'))
        .finally(() => {
          measuring = false;
        });
    }, deps.everyMs);
    timer.unref();
  }
  return {
    now: () => local() + offset,
    offsetMs: () => offset,
    stop: () => clearInterval(timer),
  };
}
