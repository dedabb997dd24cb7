import type { Inflight } from './inflight.ts';
import type { Logger } from './log.ts';

/**
 * Work that follows an ack (starting a job, sending a follow-up) runs from here rather than
 * in the request's own turn of the event loop, so that the next request's ack never waits
 * behind it. At most `concurrency` tasks run at once and at most `capacity` wait; queued work
 * counts as in flight, so a shutdown finishes it (within its bound).
 */
export interface WorkQueue {
  /** Whether `offer` would take a task now. Ask before acking, to refuse in the ack. */
  hasRoom(): boolean;
  /** Queues `task` to start after the current turn; false (and nothing queued) when full. */
  offer(name: string, task: () => Promise<unknown>): boolean;
  /** Waiting and running tasks. */
  readonly size: number;
}

export function createWorkQueue(opts: {
  concurrency: number;
  capacity: number;
  inflight: Inflight;
  log: Logger;
}): WorkQueue {
  const log = opts.log.child({ component: 'work-queue' });
  const waiting: { name: string; task: () => Promise<unknown>; done: () => void }[] = [];
  let running = 0;
  let scheduled = false;

  function pump(): void {
    scheduled = false;
    while (running < opts.concurrency && waiting.length > 0) {
      const next = waiting.shift()!;
      running++;
      next
        .task()
        .catch((err: unknown) => log.error({ err, task: next.name }, 'work.failed'))
        .finally(() => {
          running--;
          next.done();
          schedule();
        });
    }
  }

  /** Leaves the current turn: what runs next is any request already waiting for its ack. */
  function schedule(): void {
    if (scheduled || waiting.length === 0) return;
    scheduled = true;
    setImmediate(pump);
  }

  const hasRoom = () => waiting.length < opts.capacity;
  return {
    hasRoom,
    offer(name, task) {
      if (!hasRoom()) {
        log.warn({ task: name, waiting: waiting.length, running }, 'work.queue_full');
        return false;
      }
      opts.inflight.track(
        new Promise<void>((done) => {
          waiting.push({ name, task, done });
        }),
      );
      schedule();
      return true;
    },
    get size() {
      return waiting.length + running;
    },
  };
}
