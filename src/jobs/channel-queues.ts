import type { Logger } from '../log.ts';
import {
  type BucketLimit,
  type Clock,
  channelPace,
  methodPauses,
  tokenBucket,
} from './rate-limits.ts';

/** The two Slack methods the notifier spends its limits on. */
export type NotifierMethod = 'chat.postMessage' | 'chat.update';

export interface Task {
  method: NotifierMethod;
  channelId: string;
  /** An answer to a person: it goes before everything else of its method. */
  urgent: boolean;
  /**
   * Does the work and settles what came of it. Resolves false when it made no call after
   * all (the item was done, or another replica had it), so its slot is given back.
   */
  run(): Promise<boolean>;
  /** Called instead of `run` when the scheduler stops (or has stopped) before running it. */
  dropped?(): void;
}

export interface SchedulerOptions {
  clock: Clock;
  /** Least time between the starts of two posts in one channel. */
  postGapMs: number;
  /** The workspace's budget for chat.update. */
  updates: BucketLimit;
  /** Calls in flight at once, over every channel. */
  maxInFlight: number;
  log: Logger;
}

export interface Scheduler {
  add(task: Task): void;
  /** A 429 said to wait: no call of `method` starts for `ms`; other methods go on. */
  pause(method: NotifierMethod, ms: number): void;
  /**
   * A 429 on a post said to wait: chat.postMessage's limit is per channel, so no post in
   * `channelId` starts for `ms`; other channels go on.
   */
  pauseChannel(channelId: string, ms: number): void;
  /** About how long a post added to `channelId` now would wait for its turn (0: none). */
  waitFor(channelId: string): number;
  /** Starts nothing more and waits for the calls in flight; what was queued is dropped. */
  stop(): Promise<void>;
}

/** Ordinary updates leave this many tokens to urgent ones, so an answer seldom waits. */
const URGENT_RESERVE = 1;

/** Two lanes, urgent first, each in arrival order. */
function lanes() {
  const urgent: Task[] = [];
  const normal: Task[] = [];
  return {
    push: (t: Task) => (t.urgent ? urgent : normal).push(t),
    peek: () => urgent[0] ?? normal[0],
    shift: () => urgent.shift() ?? normal.shift(),
    get size() {
      return urgent.length + normal.length;
    },
  };
}
type Lanes = ReturnType<typeof lanes>;

/**
 * Runs the notifier's calls as soon as Slack's limits allow, and no sooner: each channel's
 * posts in turn at the channel's pace, one in flight per channel, so that a channel with a
 * backlog or a slow call holds up no other; updates within the workspace's budget; a method
 * paused by a 429 waits while the other goes on. Urgent work goes first in its queue.
 */
export function createScheduler(o: SchedulerOptions): Scheduler {
  const now = () => o.clock.now();
  const bucket = tokenBucket(o.updates, now);
  const reserve = Math.min(URGENT_RESERVE, o.updates.burst - 1);
  const pauses = methodPauses(now);
  /** The same bookkeeping, keyed by channel: a post's 429 pauses its channel only. */
  const channelPauses = methodPauses(now);
  const pace = channelPace(o.postGapMs, now);
  /** Channels with posts waiting, in the order they take turns. */
  const posts = new Map<string, Lanes>();
  /** Channels with a post in flight. */
  const posting = new Set<string>();
  const updates = lanes();
  const running = new Set<Promise<void>>();
  let timer: { handle: unknown; at: number } | undefined;
  let soon = false;
  let stopped = false;

  /** Runs `task`; `giveBack` returns its slot if it made no call. */
  function start(task: Task, giveBack: () => void, after: () => void = () => {}): void {
    const done: Promise<void> = (async () => task.run())()
      .then(
        (called) => {
          if (!called) giveBack();
        },
        (err: unknown) => o.log.error({ err, method: task.method }, 'notifier.task_failed'),
      )
      .finally(() => {
        running.delete(done);
        after();
        dispatchSoon();
      });
    running.add(done);
  }

  /** Starts updates while the budget lasts; returns when the next one may go, if one waits. */
  function startUpdates(): number {
    while (running.size < o.maxInFlight && updates.size > 0) {
      const paused = pauses.until('chat.update');
      if (paused) return paused;
      const keep = updates.peek()?.urgent ? 0 : reserve;
      if (!bucket.take(keep)) return bucket.readyAt(keep);
      start(updates.shift()!, () => bucket.refund());
    }
    return Infinity;
  }

  /** Starts the next post of every channel whose pace allows; returns the next such time. */
  function startPosts(): number {
    const paused = pauses.until('chat.postMessage');
    if (paused) return posts.size > 0 ? paused : Infinity;
    let next = Infinity;
    for (const [channel, queue] of [...posts]) {
      if (running.size >= o.maxInFlight) break; // a call ending dispatches again
      if (posting.has(channel)) continue; // likewise
      const ready = Math.max(pace.readyAt(channel), channelPauses.until(channel));
      if (ready > now()) {
        next = Math.min(next, ready);
        continue;
      }
      const task = queue.shift()!;
      posts.delete(channel);
      if (queue.size > 0) posts.set(channel, queue); // its next turn comes after the others'
      posting.add(channel);
      start(task, pace.started(channel), () => posting.delete(channel));
    }
    return next;
  }

  function dispatch(): void {
    soon = false;
    if (stopped) return;
    pace.prune();
    const at = Math.min(startUpdates(), startPosts());
    if (at === Infinity || (timer && timer.at <= at)) return;
    if (timer) o.clock.clearTimeout(timer.handle);
    const handle = o.clock.setTimeout(
      () => {
        timer = undefined;
        dispatch();
      },
      Math.max(0, at - now()),
    );
    timer = { handle, at };
  }

  /** One dispatch for everything added or ended in the same tick. */
  function dispatchSoon(): void {
    if (soon) return;
    soon = true;
    queueMicrotask(dispatch);
  }

  return {
    add(task) {
      if (stopped) {
        task.dropped?.();
        return;
      }
      if (task.method === 'chat.update') updates.push(task);
      else {
        const queue = posts.get(task.channelId) ?? lanes();
        queue.push(task);
        posts.set(task.channelId, queue);
      }
      dispatchSoon();
    },
    pause(method, ms) {
      pauses.pause(method, ms);
      dispatchSoon();
    },
    pauseChannel(channelId, ms) {
      channelPauses.pause(channelId, ms);
      dispatchSoon();
    },
    waitFor(channelId) {
      const t = now();
      const free = Math.max(
        pace.readyAt(channelId),
        channelPauses.until(channelId),
        pauses.until('chat.postMessage'),
        t,
      );
      // Each post queued there goes first, a gap apart.
      return free - t + (posts.get(channelId)?.size ?? 0) * o.postGapMs;
    },
    async stop() {
      stopped = true;
      if (timer) o.clock.clearTimeout(timer.handle);
      timer = undefined;
      for (const queue of posts.values()) while (queue.size > 0) queue.shift()?.dropped?.();
      posts.clear();
      while (updates.size > 0) updates.shift()?.dropped?.();
      await Promise.all(running);
    },
  };
}
