import type { Logger } from '../log.ts';

export interface Loop {
  /** Run again now rather than at the next scheduled time. */
  kick(): void;
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
}): Loop {
  let running = true;
  let kicked = false;
  let wake: (() => void) | undefined;
  let timer: NodeJS.Timeout | undefined;

  const sleep = (ms: number) =>
    new Promise<void>((resolve) => {
      wake = resolve;
      timer = setTimeout(resolve, ms);
    }).finally(() => {
      clearTimeout(timer);
      wake = undefined;
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

  return {
    kick() {
      kicked = true;
      wake?.();
    },
    async stop() {
      running = false;
      wake?.();
      await done;
    },
  };
}
