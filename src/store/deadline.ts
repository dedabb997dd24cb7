import type { Store } from './types.ts';

/** A store call that did not answer in time. It may still take effect: leases cover that. */
export class StoreTimeout extends Error {
  readonly operation: string;
  readonly timeoutMs: number;
  constructor(operation: string, timeoutMs: number) {
    super(`The database did not answer ${operation} within ${timeoutMs} ms`);
    this.name = 'StoreTimeout';
    this.operation = operation;
    this.timeoutMs = timeoutMs;
  }
}

export type CallOutcome = 'answered' | 'failed' | 'timeout';

/** A store whose every call ends within a deadline; `shorten` tightens it for a shutdown. */
export interface BoundedStore {
  store: Store;
  /** From now on, calls (those in flight too) get at most `ms` from now. */
  shorten(ms: number): void;
}

interface Pending {
  operation: string;
  at: number;
  timer: NodeJS.Timeout;
  expire: () => void;
}

/**
 * Wraps `store` so that a call not answered within `ms` rejects with `StoreTimeout` and the
 * caller (a background loop) goes on; the query itself ends on its own (the driver's
 * timeouts). `watch` hears how each call ended. `close` is passed through unbounded.
 */
export function storeWithDeadline(
  store: Store,
  ms: number,
  watch: (outcome: CallOutcome) => void = () => {},
): BoundedStore {
  let limit = ms;
  let until = Number.POSITIVE_INFINITY;
  const pending = new Set<Pending>();
  const arm = (p: Pending) => {
    clearTimeout(p.timer);
    p.timer = setTimeout(p.expire, Math.max(0, Math.min(p.at + limit, until) - Date.now()));
  };

  function bounded(operation: string, call: () => Promise<unknown>): Promise<unknown> {
    return new Promise((resolve, reject) => {
      const p: Pending = {
        operation,
        at: Date.now(),
        timer: undefined as unknown as NodeJS.Timeout,
        expire: () => {
          pending.delete(p);
          watch('timeout');
          reject(new StoreTimeout(operation, Date.now() - p.at));
        },
      };
      pending.add(p);
      arm(p);
      call().then(
        (v) => {
          if (!pending.delete(p)) return;
          clearTimeout(p.timer);
          watch('answered');
          resolve(v);
        },
        (err: unknown) => {
          if (!pending.delete(p)) return;
          clearTimeout(p.timer);
          watch('failed');
          reject(err);
        },
      );
    });
  }

  const wrapped = new Proxy(store, {
    get(target, key, receiver) {
      const value = Reflect.get(target, key, receiver);
      if (typeof value !== 'function' || key === 'close') return value;
      const operation = String(key);
      return (...args: unknown[]) => bounded(operation, async () => value.apply(target, args));
    },
  });
  return {
    store: wrapped,
    shorten(next) {
      limit = Math.min(limit, next);
      until = Math.min(until, Date.now() + next);
      for (const p of pending) arm(p);
    },
  };
}
