import type { Inflight } from './inflight.ts';
import type { Logger } from './log.ts';
import { createLoopLoad } from './loop-load.ts';

/**
 * Work that follows an ack (starting a job, sending a follow-up) runs from here rather than
 * in the request's own turn of the event loop, so that the next request's ack never waits
 * behind it. At most `concurrency` tasks run at once and at most `capacity` wait; queued work
 * counts as in flight, so a shutdown finishes it (within its bound).
 *
 * While requests keep arriving (one within `hotMs` of the last), one task runs at a time:
 * each running task's callbacks share the event loop with the acks, so a burst of commands
 * is acked first and worked through as it goes, at full width once it has passed. Only
 * CPU-bound work wants that (the reports lane below); `hotMs: 0` turns it off. Work that
 * is CPU-bound only sometimes (a start waits on Slack and the API, unless they answer at
 * once) gives `loadAbove`: then the throttle holds only while the event loop is busier than
 * that (`loopLoad`, 0 to 1).
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
  /** Named in its log lines (a lane). */
  lane?: string;
  /** 0: no burst throttle (work that waits on I/O; its callbacks cost the acks little). */
  hotMs?: number;
  /** The throttle holds only while `loopLoad()` is above this (default 0: always). */
  loadAbove?: number;
  loopLoad?: () => number;
}): WorkQueue {
  const log = opts.log.child({
    component: 'work-queue',
    ...(opts.lane ? { lane: opts.lane } : {}),
  });
  const hotMs = opts.hotMs ?? 20;
  const waiting: { name: string; task: () => Promise<unknown>; done: () => void }[] = [];
  let running = 0;
  let scheduled = false;
  let lastOffer = Number.NEGATIVE_INFINITY;
  let cooling: NodeJS.Timeout | undefined;

  /** How many may run now: one while requests keep coming, all once they have paused. */
  function width(): number {
    const hotFor = lastOffer + hotMs - performance.now();
    if (hotFor <= 0) return opts.concurrency;
    if (opts.loadAbove && opts.loopLoad && opts.loopLoad() <= opts.loadAbove)
      return opts.concurrency;
    if (!cooling && waiting.length > 0)
      cooling = setTimeout(() => {
        cooling = undefined;
        schedule();
      }, hotFor + 1);
    return 1;
  }

  function pump(): void {
    scheduled = false;
    while (running < width() && waiting.length > 0) {
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
      lastOffer = performance.now();
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

/**
 * The lanes work after an ack runs in, each its own queue, so that one kind never waits
 * behind another: `answers` to a person (usage, status, refusals, confirmations, follow-ups
 * and their receipts, the App Home), `starts` of jobs (each mostly waits on Slack and the
 * API: dozens in flight), and `reports` (/visitors, /insights: CPU-bound building, the only
 * lane throttled to one at a time while requests keep arriving).
 */
export interface WorkLanes {
  answers: WorkQueue;
  starts: WorkQueue;
  reports: WorkQueue;
}

export interface LaneSize {
  concurrency: number;
  capacity: number;
}

/**
 * Answers are I/O too: a follow-up waits about a second on the agent API. At 16 a burst of
 * replies queued behind each other's POSTs (p99 reply → POST 350-400 ms with the API at 1 s).
 */
export const DEFAULT_LANES: Record<keyof WorkLanes, LaneSize> = {
  answers: { concurrency: 64, capacity: 5_000 },
  starts: { concurrency: 32, capacity: 5_000 },
  reports: { concurrency: 2, capacity: 50 },
};

/** Event-loop load above which starts go one at a time while commands keep arriving. */
export const STARTS_THROTTLE_LOAD = 0.8;

export function createWorkLanes(opts: {
  inflight: Inflight;
  log: Logger;
  sizes?: Partial<Record<keyof WorkLanes, LaneSize>>;
}): WorkLanes {
  const loopLoad = createLoopLoad();
  const lane = (name: keyof WorkLanes, hotMs: number, loadAbove = 0) =>
    createWorkQueue({
      ...DEFAULT_LANES[name],
      ...opts.sizes?.[name],
      inflight: opts.inflight,
      log: opts.log,
      lane: name,
      hotMs,
      loadAbove,
      loopLoad,
    });
  return {
    answers: lane('answers', 0),
    // Starts wait on I/O, dozens at once; when Slack and the API answer at once they are
    // CPU-bound, and while the loop is that busy a burst's acks go first.
    starts: lane('starts', 20, STARTS_THROTTLE_LOAD),
    reports: lane('reports', 20),
  };
}
