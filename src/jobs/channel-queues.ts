import { AsyncResource } from 'node:async_hooks';
import type { Logger } from '../log.ts';
import {
  type BucketLimit,
  type Clock,
  channelPace,
  methodPauses,
  type TokenBucket,
  tokenBucket,
} from './rate-limits.ts';

/** The two Slack methods the notifier spends its limits on. */
export type NotifierMethod = 'chat.postMessage' | 'chat.update';

export interface Task {
  method: NotifierMethod;
  channelId: string;
  /** The workspace whose token makes the call: whose limits and share it spends. */
  teamId: string;
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
  /** A workspace's budget for chat.update. */
  updates: BucketLimit;
  /** Calls in flight at once, over every channel. */
  maxInFlight: number;
  /**
   * Each workspace calls Slack with its own token (distributed mode), so each has its own
   * limits (Tier 3 for edits, 429 pauses) and takes turns with the others, holding at most
   * `workspaceShare` of the calls in flight. Off (one workspace, one token): one set of
   * limits and no share, whatever team a task names.
   */
  perWorkspace?: { workspaceShare: number };
  log: Logger;
}

export interface Scheduler {
  add(task: Task): void;
  /**
   * A 429 said to wait: no call of `method` with `teamId`'s token starts for `ms`; other
   * methods, and other workspaces, go on.
   */
  pause(method: NotifierMethod, ms: number, teamId: string): void;
  /**
   * A 429 on a post said to wait: chat.postMessage's limit is per channel, so no post in
   * `channelId` starts for `ms`; other channels go on.
   */
  pauseChannel(channelId: string, ms: number): void;
  /** About how long a post added to `channelId` (of `teamId`) now would wait for its turn (0: none). */
  waitFor(channelId: string, teamId: string): number;
  /** Starts nothing more and waits for the calls in flight; what was queued is dropped. */
  stop(): Promise<void>;
}

/** Ordinary updates leave this many tokens to urgent ones, so an answer seldom waits. */
const URGENT_RESERVE = 1;
/**
 * Calls past `maxInFlight` (and past a workspace's share) that urgent work may start: an
 * answer to a person never waits for a slot an announcement holds. During a burst every
 * slot is an announcement's, and each of those can be held back a while (by the database's
 * hush for the person's own queries: src/store/pool-gate.ts), so waiting for one to end
 * put 100 ms and more before a job's root. Urgent work is bounded by people (one root in
 * flight per channel), so this bound is only a backstop.
 */
export const URGENT_HEADROOM = 8;

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

/** A workspace's waiting work: its channels' posts, in the order they take turns, and its edits. */
interface Workspace {
  posts: Map<string, Lanes>;
  /** How many of its channels' queued posts are urgent (a count: no scan of its channels). */
  urgentPosts: number;
  updates: Lanes;
  bucket: TokenBucket;
}

/** Moves `key` to the end of `map`'s order (its next turn after the others'), or drops it. */
function takeTurn<V>(map: Map<string, V>, key: string, keep: boolean): void {
  const v = map.get(key);
  map.delete(key);
  if (keep && v !== undefined) map.set(key, v);
}

/**
 * Runs the notifier's calls as soon as Slack's limits allow, and no sooner: each channel's
 * posts in turn at the channel's pace, one in flight per channel, so that a channel with a
 * backlog or a slow call holds up no other; updates within the workspace's budget; a method
 * paused by a 429 waits while the other goes on. Urgent work goes first in its queue.
 * Workspaces (distributed mode) take turns: each one's next call, then each one's next, a
 * workspace holding at most its share of the calls in flight, and each with its own budget
 * and pauses, so that one workspace's burst or 429 holds up no other's.
 */
export function createScheduler(o: SchedulerOptions): Scheduler {
  const now = () => o.clock.now();
  const reserve = Math.min(URGENT_RESERVE, o.updates.burst - 1);
  const share = o.perWorkspace?.workspaceShare ?? o.maxInFlight;
  const keyOf = (teamId: string) => (o.perWorkspace ? teamId : '');
  /** 429 pauses, per workspace and method. */
  const pauses = methodPauses(now);
  const paused = (ws: string, method: NotifierMethod) => pauses.until(`${ws}\u0000${method}`);
  /** The same bookkeeping, keyed by channel: a post's 429 pauses its channel only. */
  const channelPauses = methodPauses(now);
  const pace = channelPace(o.postGapMs, now);
  /** Workspaces with work waiting, in the order they take turns. */
  const waiting = new Map<string, Workspace>();
  /** Each workspace's update budget, kept while it has none waiting (it refills meanwhile). */
  const buckets = new Map<string, TokenBucket>();
  /** Calls in flight, per workspace. */
  const calling = new Map<string, number>();
  /** Channels with a post in flight. */
  const posting = new Set<string>();
  const running = new Set<Promise<void>>();
  let timer: { handle: unknown; at: number } | undefined;
  let soon = false;
  let stopped = false;

  const workspace = (ws: string): Workspace => {
    let w = waiting.get(ws);
    if (!w) {
      let bucket = buckets.get(ws);
      if (!bucket) {
        bucket = tokenBucket(o.updates, now);
        buckets.set(ws, bucket);
      }
      w = { posts: new Map(), urgentPosts: 0, updates: lanes(), bucket };
      waiting.set(ws, w);
    }
    return w;
  };
  const hasWork = (w: Workspace) => w.posts.size > 0 || w.updates.size > 0;
  /** Whether a person waits on `w`'s next call: an urgent update, or a channel's urgent post. */
  const waitedOn = (w: Workspace) => w.updates.peek()?.urgent === true || w.urgentPosts > 0;
  /** What `ws` may start now: anything, urgent work only (`URGENT_HEADROOM`), or nothing. */
  const room = (ws: string): 'all' | 'urgent' | 'none' => {
    const mine = calling.get(ws) ?? 0;
    if (running.size < o.maxInFlight && mine < share) return 'all';
    if (running.size < o.maxInFlight + URGENT_HEADROOM && mine < share + URGENT_HEADROOM)
      return 'urgent';
    return 'none';
  };

  /** Runs `task`; `giveBack` returns its slot if it made no call. */
  function start(ws: string, task: Task, giveBack: () => void, after: () => void = () => {}) {
    calling.set(ws, (calling.get(ws) ?? 0) + 1);
    const done: Promise<void> = (async () => task.run())()
      .then(
        (called) => {
          if (!called) giveBack();
        },
        (err: unknown) => o.log.error({ err, method: task.method }, 'notifier.task_failed'),
      )
      .finally(() => {
        running.delete(done);
        const n = (calling.get(ws) ?? 1) - 1;
        if (n > 0) calling.set(ws, n);
        else calling.delete(ws);
        after();
        dispatchSoon();
      });
    running.add(done);
  }

  /**
   * Starts `ws`'s next update if its budget and pauses allow: true if it started one, else
   * when one may go (Infinity: none waits).
   */
  function startUpdate(ws: string, w: Workspace, urgentOnly: boolean): true | number {
    if (w.updates.size === 0) return Infinity;
    if (urgentOnly && !w.updates.peek()?.urgent) return Infinity; // a call ending dispatches
    const until = paused(ws, 'chat.update');
    if (until) return until;
    const keep = w.updates.peek()?.urgent ? 0 : reserve;
    if (!w.bucket.take(keep)) return w.bucket.readyAt(keep);
    start(ws, w.updates.shift()!, () => w.bucket.refund());
    return true;
  }

  /** Starts the next post of `ws`'s first channel whose pace allows: as `startUpdate`. */
  function startPost(ws: string, w: Workspace, urgentOnly: boolean): true | number {
    if (w.posts.size === 0) return Infinity;
    const until = paused(ws, 'chat.postMessage');
    if (until) return until;
    let next = Infinity;
    for (const [channel, queue] of w.posts) {
      if (posting.has(channel)) continue; // a call ending dispatches again
      if (urgentOnly && !queue.peek()?.urgent) continue; // so does this
      const ready = Math.max(pace.readyAt(channel), channelPauses.until(channel));
      if (ready > now()) {
        next = Math.min(next, ready);
        continue;
      }
      const task = queue.shift()!;
      if (task.urgent) w.urgentPosts -= 1;
      takeTurn(w.posts, channel, queue.size > 0); // its next turn comes after the others'
      posting.add(channel);
      start(ws, task, pace.started(channel), () => posting.delete(channel));
      return true;
    }
    return next;
  }

  /**
   * Starts calls in rounds: in each, every workspace under its share starts its next
   * update, then its next post (workspaces with an answer to a person waiting, a root post
   * or an edit, go first), and takes its next turn after the others'. Past the cap and the
   * share, only urgent work starts (`room`). Returns when the next call may go, if one waits.
   */
  function startCalls(): number {
    let next = Infinity;
    for (let started = true; started && running.size < o.maxInFlight + URGENT_HEADROOM; ) {
      started = false;
      const order = [...waiting]
        .map(([ws, w]) => ({ ws, w, urgent: waitedOn(w) }))
        .sort((a, b) => Number(!a.urgent) - Number(!b.urgent));
      for (const { ws, w, urgent } of order) {
        const r0 = room(ws);
        if (r0 === 'none' || (r0 === 'urgent' && !urgent)) continue; // a call ending dispatches
        let took = false;
        for (const step of [startUpdate, startPost]) {
          const may = room(ws);
          if (may === 'none') break;
          const r = step(ws, w, may === 'urgent');
          if (r === true) took = true;
          else next = Math.min(next, r);
        }
        if (took) started = true;
        takeTurn(waiting, ws, hasWork(w));
      }
    }
    return next;
  }

  function dispatch(): void {
    soon = false;
    if (stopped) return;
    pace.prune();
    const at = startCalls();
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
    add(added) {
      if (stopped) {
        added.dropped?.();
        return;
      }
      // Run in the context of whoever added it, not of whatever call happens to start it:
      // a person's root post stays a person's (src/store/pool-gate.ts), an announcement the
      // notifier's.
      const task: Task = { ...added, run: AsyncResource.bind(added.run, 'Task', added) };
      const w = workspace(keyOf(task.teamId));
      if (task.method === 'chat.update') w.updates.push(task);
      else {
        const queue = w.posts.get(task.channelId) ?? lanes();
        queue.push(task);
        if (task.urgent) w.urgentPosts += 1;
        w.posts.set(task.channelId, queue);
      }
      dispatchSoon();
    },
    pause(method, ms, teamId) {
      pauses.pause(`${keyOf(teamId)}\u0000${method}`, ms);
      dispatchSoon();
    },
    pauseChannel(channelId, ms) {
      channelPauses.pause(channelId, ms);
      dispatchSoon();
    },
    waitFor(channelId, teamId) {
      const t = now();
      const ws = keyOf(teamId);
      const free = Math.max(
        pace.readyAt(channelId),
        channelPauses.until(channelId),
        paused(ws, 'chat.postMessage'),
        t,
      );
      // Each post queued there goes first, a gap apart.
      return free - t + (waiting.get(ws)?.posts.get(channelId)?.size ?? 0) * o.postGapMs;
    },
    async stop() {
      stopped = true;
      if (timer) o.clock.clearTimeout(timer.handle);
      timer = undefined;
      for (const w of waiting.values()) {
        for (const queue of w.posts.values()) while (queue.size > 0) queue.shift()?.dropped?.();
        while (w.updates.size > 0) w.updates.shift()?.dropped?.();
      }
      waiting.clear();
      await Promise.all(running);
    },
  };
}
