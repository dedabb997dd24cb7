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
   * work never more than `max - reserved` at once, nor during the hush (`GateOptions`).
   * Rejects with `StoreTimeout` after `timeoutMs` in the queue.
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

export interface GateOptions {
  /** Connections background work leaves free for the foreground (`reservedFor`). */
  reserved: number;
  /** A waiter gives up (`StoreTimeout`) after this long in the queue. */
  timeoutMs: number;
  /**
   * The hush: while a person's work has a connection or waits for one, and this long after
   * its last turn, background work waits, so that the background loops' queries (and the
   * CPU their work costs here and on the server) do not share the moment with a command's.
   * 0: no hush.
   */
  hushMs?: number;
  /**
   * The longest the hush holds background work back at a time; then it lapses for as long,
   * so background work never starves, however busy the foreground.
   */
  holdMs?: number;
  now?: () => number;
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
export function createPoolGate(max: number, opts: GateOptions): PoolGate {
  const backgroundMax = Math.max(1, max - opts.reserved);
  const now = opts.now ?? (() => performance.now());
  const hushMs = opts.hushMs ?? 0;
  // Never so long that a held waiter's own timeout could fire first.
  const holdMs = Math.min(opts.holdMs ?? 0, opts.timeoutMs / 2);
  let inUse = 0;
  let background = 0;
  let foregroundLeftAt = Number.NEGATIVE_INFINITY;
  /** When the hush began to hold background work back, this time (undefined: it does not). */
  let heldSince: number | undefined;
  /** A hush that held background work `holdMs` lapses until then, however busy people are. */
  let freeUntil = Number.NEGATIVE_INFINITY;
  let wake: NodeJS.Timeout | undefined;
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
        else foregroundLeftAt = now();
        serve();
      },
    };
  };
  const mayEnter = (isBackground: boolean) =>
    inUse < max && (!isBackground || background < backgroundMax);
  /**
   * Until when a person's work holds the background back: while it has a connection or
   * waits for one, and `hushMs` after its last turn (the gap between two steps of a
   * command). `Infinity` while it is at work; past (<= now) once it is quiet.
   */
  const hushedUntil = (): number =>
    inUse > background || waiting.length > 0 ? Infinity : foregroundLeftAt + hushMs;
  const hushed = (t: number) => hushMs > 0 && t >= freeUntil && hushedUntil() > t;
  /**
   * Whether the first background waiter may go now: no hush, or the hush has held the
   * background `holdMs` already, and lapses for as long (people busy without a pause leave
   * the background loops half the time, not none).
   */
  function backgroundMayGo(t: number): boolean {
    if (backgroundWaiting.length === 0 || !mayEnter(true)) return false;
    if (!hushed(t)) {
      heldSince = undefined;
      return true;
    }
    heldSince ??= t;
    if (t - heldSince >= holdMs) {
      freeUntil = t + holdMs;
      heldSince = undefined;
      return true;
    }
    // Held: look again when the hush ends (a foreground turn's leave looks sooner).
    const at = Math.min(hushedUntil(), heldSince + holdMs);
    clearTimeout(wake);
    wake = setTimeout(serve, Math.max(1, Math.ceil(at - t))).unref();
    return false;
  }
  function serve(): void {
    for (;;) {
      const next =
        waiting.length > 0 && mayEnter(false)
          ? waiting.shift()
          : backgroundMayGo(now())
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
      const t = now();
      const free = queue.length === 0 && mayEnter(isBackground) && !(isBackground && hushed(t));
      if (free) return Promise.resolve(turn(isBackground));
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
        // A background waiter held only by the hush needs its wake-up planned.
        if (isBackground && queue.length === 1) serve();
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
