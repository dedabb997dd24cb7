import type { Logger } from '../log.ts';

export interface Loop {
  /** Run again now rather than at the next scheduled time. */
  kick(): void;
  /** Run no later than `at` (epoch ms): sooner than scheduled if need be, never later. */
  kickAt(at: number): void;
  /** Stop scheduling and wait for the pass in flight to end. */
  stop(): Promise<void>;
}

/**
 * One background loop: runs `pass`, then sleeps for the delay it returns (capped by
 * `idleMs`) or until kicked. One loop serves all jobs: no timer per job.
 */
export function startLoop(opts: {
  name: string;
  log: Logger;
  idleMs: number;
  pass: () => Promise<number | null>;
  /** The clock `kickAt` times are on (the database's: src/clock.ts). */
  now?: () => number;
}): Loop {
  const now = opts.now ?? Date.now;
  let running = true;
  let kicked = false;
  let wake: (() => void) | undefined;
  let timer: NodeJS.Timeout | undefined;
  /** When the current sleep ends; and the earliest run asked for while a pass was running. */
  let until = Number.POSITIVE_INFINITY;
  let asked = Number.POSITIVE_INFINITY;

  const arm = (resolve: () => void, at: number) => {
    clearTimeout(timer);
    until = at;
    timer = setTimeout(resolve, Math.max(0, at - now()));
  };
  const sleep = (ms: number) =>
    new Promise<void>((resolve) => {
      wake = resolve;
      arm(resolve, Math.min(now() + ms, asked));
      asked = Number.POSITIVE_INFINITY;
    }).finally(() => {
      clearTimeout(timer);
      wake = undefined;
      until = Number.POSITIVE_INFINITY;
    });

  const done = (async () => {
    while (running) {
      kicked = false;
      let delay: number | null = null;
      try {
        delay = await opts.pass();
      } catch (err) {
        // A pass that throws is a bug or the database going away; keep the loop alive.
        opts.log.error({ err, loop: opts.name }, 'loop.pass_failed');
      }
      if (!running) break;
      if (kicked) continue;
      await sleep(Math.max(0, Math.min(delay ?? opts.idleMs, opts.idleMs)));
    }
  })();

  const kick = () => {
    kicked = true;
    wake?.();
  };
  return {
    kick,
    kickAt(at) {
      if (at <= now()) return kick();
      if (wake) {
        if (at < until) arm(wake, at);
      } else asked = Math.min(asked, at);
    },
    async stop() {
      running = false;
      wake?.();
      await done;
    },
  };
}
