/**
 * Work that Slack handed us and we acknowledged (a command, a thread reply) is still being
 * done after the ack. A shutdown waits for it, up to a bound, instead of cutting it off
 * between posting a root message and creating the job.
 */
export interface Inflight {
  /** Counts `work` as in flight until it settles; returns it unchanged. */
  track<T>(work: Promise<T>): Promise<T>;
  readonly pending: number;
  /**
   * Waits until nothing is in flight (work tracked meanwhile included) or `timeoutMs` has
   * passed, and says how it went.
   */
  drain(timeoutMs: number): Promise<DrainResult>;
}

export interface DrainResult {
  /** In flight when the drain began. */
  pending: number;
  /** Still in flight when it ended: more than 0 only when the timeout cut it short. */
  left: number;
  durationMs: number;
}

export function createInflight(): Inflight {
  let pending = 0;
  const idle = new Set<() => void>();
  const settled = () => {
    pending--;
    if (pending > 0) return;
    for (const resolve of idle) resolve();
    idle.clear();
  };

  return {
    track(work) {
      pending++;
      work.then(settled, settled);
      return work;
    },
    get pending() {
      return pending;
    },
    async drain(timeoutMs) {
      const started = performance.now();
      const before = pending;
      if (pending > 0) {
        let timer: NodeJS.Timeout | undefined;
        await new Promise<void>((resolve) => {
          idle.add(resolve);
          timer = setTimeout(resolve, timeoutMs);
        });
        clearTimeout(timer);
      }
      return {
        pending: before,
        left: pending,
        durationMs: Math.round(performance.now() - started),
      };
    },
  };
}
