import { AsyncLocalStorage } from 'node:async_hooks';
import { StoreTimeout } from './deadline.ts';
import type { Store } from './types.ts';

/**
 * Which database work a person is waiting on. The background loops (poller, notifier,
 * recovery, digests, housekeeping) mark their calls; everything else (a command, a button,
 * an event: someone waits for its answer) is in the foreground. The mark travels with the
 * call's async context down to the pool, which Kysely reaches without our arguments.
 */
const lane = new AsyncLocalStorage<'background'>();

/** Whether the current call was marked as background work. */
export function inBackground(): boolean {
  return lane.getStore() === 'background';
}

/** Runs `fn` as background work: the pool queries it makes wait behind the foreground's. */
export function runInBackground<T>(fn: () => T): T {
  return lane.run('background', fn);
}

/**
 * `store` with every call marked as background work: its queries wait behind the
 * foreground's for a connection and never take the last ones (`createPoolGate`).
 */
export function backgroundStore(store: Store): Store {
  return new Proxy(store, {
    get(target, prop, receiver) {
      const value = Reflect.get(target, prop, receiver) as unknown;
      if (typeof value !== 'function' || prop === 'close') return value;
      return (...args: unknown[]) =>
        runInBackground(() => (value as (...a: unknown[]) => unknown).apply(target, args));
    },
  });
}

/** A turn to use one of the pool's connections: `leave` gives it back (once). */
export interface PoolTurn {
  leave(): void;
}

export interface PoolGate {
  /**
   * Waits for a turn: at most `max` at once, the foreground's waiters first, and background
   * work never more than `max - reserved` at once. Rejects with `StoreTimeout` after
   * `timeoutMs` in the queue.
   */
  enter(background: boolean): Promise<PoolTurn>;
  /** How many turns are taken, and waiting, now (what the tests check). */
  counts(): { inUse: number; background: number; waiting: number; backgroundWaiting: number };
}

interface Waiter {
  background: boolean;
  grant: (turn: PoolTurn) => void;
  timer: NodeJS.Timeout;
}

/** How many of a pool's connections background work leaves free: a quarter, at least one. */
export function reservedFor(max: number): number {
  return max <= 1 ? 0 : Math.max(1, Math.floor(max / 4));
}

/**
 * The order in which work gets the pool's connections. Without it, pg's pool serves callers
 * in arrival order, and a burst of background writes (a poll batch, the notifier's marks)
 * fills every connection and the queue, so a person's `/agent` waits behind all of them.
 */
export function createPoolGate(
  max: number,
  opts: { reserved: number; timeoutMs: number },
): PoolGate {
  const backgroundMax = Math.max(1, max - opts.reserved);
  let inUse = 0;
  let background = 0;
  const waiting: Waiter[] = [];
  const backgroundWaiting: Waiter[] = [];

  const turn = (isBackground: boolean): PoolTurn => {
    inUse += 1;
    if (isBackground) background += 1;
    let left = false;
    return {
      leave() {
        if (left) return;
        left = true;
        inUse -= 1;
        if (isBackground) background -= 1;
        serve();
      },
    };
  };
  const mayEnter = (isBackground: boolean) =>
    inUse < max && (!isBackground || background < backgroundMax);
  function serve(): void {
    for (;;) {
      const next =
        waiting.length > 0 && mayEnter(false)
          ? waiting.shift()
          : backgroundWaiting.length > 0 && mayEnter(true)
            ? backgroundWaiting.shift()
            : undefined;
      if (!next) return;
      clearTimeout(next.timer);
      next.grant(turn(next.background));
    }
  }

  return {
    enter(isBackground) {
      const queue = isBackground ? backgroundWaiting : waiting;
      // Someone waiting already goes first: no overtaking within a lane.
      if (queue.length === 0 && mayEnter(isBackground)) return Promise.resolve(turn(isBackground));
      return new Promise((resolve, reject) => {
        const w: Waiter = {
          background: isBackground,
          grant: resolve,
          timer: setTimeout(() => {
            queue.splice(queue.indexOf(w), 1);
            reject(new StoreTimeout('a free connection', opts.timeoutMs));
          }, opts.timeoutMs),
        };
        queue.push(w);
      });
    },
    counts: () => ({
      inUse,
      background,
      waiting: waiting.length,
      backgroundWaiting: backgroundWaiting.length,
    }),
  };
}
