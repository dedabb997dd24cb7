import { ChatError } from '../chat-errors.ts';
import type { Logger } from '../log.ts';
import type { JobThread, OutboxItem, Store } from '../store/types.ts';
import { createScheduler, type NotifierMethod, type Scheduler } from './channel-queues.ts';
import { type Loop, startLoop } from './loop.ts';
import { announce, showRoot } from './notifier-sends.ts';
import { type JobChat, type JobMetrics, noJobMetrics } from './ports.ts';
import { type BucketLimit, type Clock, systemClock, TIER_3 } from './rate-limits.ts';

export interface NotifierDeps {
  store: Store;
  chat: JobChat;
  log: Logger;
  /** Least time between two posts in one channel: Slack allows about one a second. */
  channelGapMs?: number;
  /** The workspace's budget for root edits: chat.update is Tier 3, about 50 a minute. */
  updateLimit?: BucketLimit;
  metrics?: JobMetrics;
  /** Names this process in the leases it takes on root updates. */
  owner: string;
  /**
   * How long a claim on a root update or an announcement lasts: longer than a Slack call
   * can take (15 s timeout), so a post in flight is not taken over by another replica.
   */
  leaseMs: number;
  clock?: Clock;
  /**
   * The per-channel pacer, when it is shared (root posts of job starts go through it too:
   * src/jobs/root-pacer.ts); one of its own otherwise. Stopped with the notifier.
   */
  scheduler?: Scheduler;
  /**
   * Distributed mode: each workspace posts with its own token, within its own limits, and
   * takes turns with the others for the queues and the calls in flight (its share of them).
   */
  perWorkspace?: boolean;
  /** The queues' bounds (tests make them small); QUEUE_LIMITS by default. */
  queueLimits?: Partial<QueueLimits>;
}

/** Announcements fetched in one go; answers to people are fetched apart, first. */
const BATCH = 100;
const URGENT_BATCH = 20;
/** Queued per channel: a few seconds of posts at Slack's pace. */
const CHANNEL_QUEUE = 5;
/** A queue at its bound lasts at least this long: when to top it up. */
const REFILL_MS = 1_000;
/**
 * While a pass finds the queues full, the passes that changes set off (every poll that
 * records one, and every root edit: `changed`) are at least this far apart: a pass then only
 * tops up what drained, and thousands of changes in a burst would otherwise run pass after
 * pass, each a few queries over the whole outbox, taking the database from the polls' writes
 * and the commands' reads (the fairness benchmark saw 20-35 passes a second). A workspace's
 * first announcement still comes in the next pass: this much later at most.
 */
export const FULL_PASS_GAP_MS = 250;
const MAX_IN_FLIGHT = 16;
/**
 * Distributed mode: what one workspace may hold of the calls in flight (and below, of the
 * queues), so that the others always find room.
 */
const WORKSPACE_SHARE = 12;

/** How much the notifier queues ahead of Slack's pace. */
export interface QueueLimits {
  /** Posts queued, over every channel. */
  posts: number;
  /** Root edits queued: about a minute of Tier 3. */
  roots: number;
  /**
   * Distributed mode: a workspace's share of the posts; a minute of its own Tier 3 of edits
   * (`roots`), with every workspace's edits queued up to `allRoots`.
   */
  workspacePosts: number;
  allRoots: number;
  /**
   * Distributed mode: posts and edits a workspace holding fewer than these may still queue
   * beyond a full queue (see fetchPosts, fetchRoots).
   */
  postFloor: number;
  rootFloor: number;
}

export const QUEUE_LIMITS: QueueLimits = {
  posts: 1_000,
  roots: 50,
  workspacePosts: 200,
  allRoots: 1_000,
  postFloor: 20,
  rootFloor: 5,
};

/**
 * The notifier's per-channel pacer: posts a gap apart per channel (Slack allows about one a
 * second), edits within the workspace's Tier 3 budget. Built apart so that job starts can
 * post their roots through the same one (src/app/bot.ts).
 */
export function createNotifierScheduler(o: {
  log: Logger;
  clock?: Clock;
  channelGapMs?: number | undefined;
  updateLimit?: BucketLimit | undefined;
  /** Distributed mode: each workspace its own limits and a share of the calls in flight. */
  perWorkspace?: boolean | undefined;
}): Scheduler {
  return createScheduler({
    clock: o.clock ?? systemClock,
    postGapMs: o.channelGapMs ?? 1_000,
    updates: o.updateLimit ?? TIER_3,
    maxInFlight: MAX_IN_FLIGHT,
    ...(o.perWorkspace ? { perWorkspace: { workspaceShare: WORKSPACE_SHARE } } : {}),
    log: o.log.child({ component: 'notifier' }),
  });
}

/** What a fetch found: nothing more, more at once (a full batch), or more once queues drain. */
type More = 'none' | 'now' | 'later';

/**
 * A root's first edit answers the `/agent` that posted it (started, or could not start):
 * someone is waiting on it, so it goes before the other edits.
 */
const answersRequest = (t: JobThread) => t.rootShownVersion === 1 || t.status === 'start_failed';

/** How many times each key comes up. */
function counts(keys: Iterable<string>): Map<string, number> {
  const n = new Map<string, number>();
  for (const k of keys) n.set(k, (n.get(k) ?? 0) + 1);
  return n;
}

/** The keys counted `at` times or more. */
const atLeast = (n: Map<string, number>, at: number) =>
  [...n].filter(([, c]) => c >= at).map(([k]) => k);

/**
 * Turns recorded state into Slack messages: posts the outbox's announcements and brings root
 * messages up to date. A loop fetches what is due into per-channel queues (never an item
 * already queued) and a scheduler sends it as Slack's limits allow, channels in parallel;
 * answers to people go first. Each item is leased only as it is sent, so a queued one is
 * never held from another replica. An announcement attempted before (a crash or a failed
 * call mid-post) is posted again only if the thread does not already hold it. In distributed
 * mode workspaces take turns in what is fetched (the store lists them in turn) and each holds
 * a share of the queues at most, so one workspace's burst delays no other's announcements.
 */
export interface Notifier extends Loop {
  /**
   * A poll recorded a change (an announcement, a root to edit): a pass soon, but while the
   * queues are full no sooner than FULL_PASS_GAP_MS after the last. `kick` (an answer to a
   * person waiting) is never held back.
   */
  changed(): void;
}

export function startNotifier(deps: NotifierDeps): Notifier {
  const { store, chat, clock = systemClock } = deps;
  const log = deps.log.child({ component: 'notifier' });
  const now = () => clock.now();
  const metrics = deps.metrics ?? noJobMetrics;
  const scheduler =
    deps.scheduler ??
    createNotifierScheduler({
      log: deps.log,
      clock,
      channelGapMs: deps.channelGapMs,
      updateLimit: deps.updateLimit,
      perWorkspace: deps.perWorkspace,
    });
  const limits = { ...QUEUE_LIMITS, ...deps.queueLimits };
  const postShare = deps.perWorkspace ? limits.workspacePosts : limits.posts;
  const rootShare = limits.roots;
  const rootQueue = deps.perWorkspace ? limits.allRoots : limits.roots;
  /** Queued or in flight: announcement id → where, and root edits' thread id → team. */
  const queuedPosts = new Map<number, { channelId: string; teamId: string }>();
  const queuedRoots = new Map<number, string>();
  /** When the soonest retry this process put off falls due. */
  let retryAt: number | null = null;
  /** When the last pass ended finding the queues full (null: it did not). */
  let fullAt: number | null = null;
  /** Something more to send: the next pass now, or FULL_PASS_GAP_MS after one found them full. */
  function changed(): void {
    if (fullAt !== null && now() - fullAt < FULL_PASS_GAP_MS)
      loop.kickAt(fullAt + FULL_PASS_GAP_MS);
    else loop.kick();
  }

  /**
   * Slack said "later" for `delay`; a 429 also pauses what it limits that long: a post's
   * channel (chat.postMessage is limited per channel), or the workspace's edits (chat.update,
   * per workspace: another workspace's token has limits of its own).
   */
  function later(
    err: unknown,
    method: NotifierMethod | null,
    delay: number,
    where: { teamId: string; channelId?: string },
  ): void {
    if (method && err instanceof ChatError && err.retryAfterMs !== undefined) {
      if (method === 'chat.postMessage' && where.channelId)
        scheduler.pauseChannel(where.channelId, err.retryAfterMs);
      else scheduler.pause(method, err.retryAfterMs, where.teamId);
    }
    retryAt = Math.min(retryAt ?? Infinity, now() + delay);
    loop.kick(); // so that its sleep ends by then
  }
  const sends = { store, chat, log, metrics, owner: deps.owner, leaseMs: deps.leaseMs, now, later };

  function queuePost(item: OutboxItem): void {
    if (queuedPosts.has(item.id)) return;
    queuedPosts.set(item.id, { channelId: item.channelId, teamId: item.teamId });
    scheduler.add({
      method: 'chat.postMessage',
      channelId: item.channelId,
      teamId: item.teamId,
      urgent: item.announcement.kind === 'notice',
      run: () => announce(sends, item).finally(() => queuedPosts.delete(item.id)),
    });
  }

  function queueRoot(t: JobThread, urgent: boolean): void {
    if (queuedRoots.has(t.id)) return;
    queuedRoots.set(t.id, t.teamId);
    scheduler.add({
      method: 'chat.update',
      channelId: t.channelId,
      teamId: t.teamId,
      urgent,
      run: async () => {
        let edited = false;
        try {
          edited = await showRoot(sends, t.id);
        } finally {
          queuedRoots.delete(t.id);
        }
        // A change recorded while this edit was queued or in flight (here, or by another
        // replica, which then skipped the root we held) may be newer than what it showed,
        // and the passes meanwhile passed the root over: one more pass looks again.
        if (edited) changed();
        return edited;
      },
    });
  }

  /** Queues due announcements: notices (answers to people) always, the rest while there is room. */
  async function fetchPosts(): Promise<More> {
    const urgent = await store.pendingAnnouncements(now(), URGENT_BATCH, {
      kinds: ['notice'],
      skipIds: [...queuedPosts.keys()],
    });
    for (const item of urgent) queuePost(item);
    const perChannel = counts([...queuedPosts.values()].map((q) => q.channelId));
    const perTeam = counts([...queuedPosts.values()].map((q) => q.teamId));
    const full = atLeast(perChannel, CHANNEL_QUEUE);
    // Distributed mode: a full queue still takes the posts of workspaces holding fewer than
    // postFloor, so that a workspace's first posts never wait for the others' backlog to
    // drain (the queue then holds at most that many more per workspace).
    const room = limits.posts - queuedPosts.size;
    const floor = room <= 0 && deps.perWorkspace === true;
    if (room <= 0 && !floor) return 'later';
    const share = floor ? limits.postFloor : postShare;
    const fullTeams = atLeast(perTeam, share);
    const limit = floor ? BATCH : Math.min(BATCH, room);
    // A channel with a backlog is left out once its queue is full, and a workspace once it
    // holds its share: neither can take the others' turn.
    const items = await store.pendingAnnouncements(now(), limit, {
      skipIds: [...queuedPosts.keys()],
      skipChannels: full,
      skipTeams: fullTeams,
    });
    let capped = floor || full.length > 0 || fullTeams.length > 0;
    for (const item of items) {
      const n = perChannel.get(item.channelId) ?? 0;
      const m = perTeam.get(item.teamId) ?? 0;
      if ((n >= CHANNEL_QUEUE || m >= share) && item.announcement.kind !== 'notice') capped = true;
      else {
        perChannel.set(item.channelId, n + 1);
        perTeam.set(item.teamId, m + 1);
        queuePost(item);
      }
    }
    if (items.length === limit || urgent.length === URGENT_BATCH) return 'now';
    return capped ? 'later' : 'none';
  }

  /** Queues due root edits: answers to people always, the rest while there is room. */
  async function fetchRoots(): Promise<More> {
    const room = rootQueue - queuedRoots.size;
    const limit = Math.min(Math.max(room, URGENT_BATCH), BATCH);
    const perTeam = counts([...queuedRoots.values()]);
    // Distributed mode: a workspace holding a minute of its edits is left out (its own Tier 3
    // budget, not the queue, holds it back), and a full queue still takes the edits of
    // workspaces holding fewer than rootFloor (as fetchPosts does for posts).
    const floor = room <= 0 && rootQueue > rootShare;
    const share = floor ? limits.rootFloor : rootShare;
    const fullTeams = rootQueue > rootShare ? atLeast(perTeam, share) : [];
    const threads = await store.pendingRootUpdates(
      now(),
      limit,
      [...queuedRoots.keys()],
      fullTeams,
    );
    let capped = floor || fullTeams.length > 0;
    for (const t of threads) {
      const urgent = answersRequest(t);
      const n = perTeam.get(t.teamId) ?? 0;
      const fits =
        (floor || queuedRoots.size < rootQueue) && (rootQueue === rootShare || n < share);
      if (urgent || fits) {
        perTeam.set(t.teamId, n + 1);
        queueRoot(t, urgent);
      } else capped = true;
    }
    if (capped) return 'later';
    return threads.length === limit ? 'now' : 'none';
  }

  async function pass(): Promise<number | null> {
    const started = now();
    const more = [await fetchPosts(), await fetchRoots()];
    // A retry due by the start of this pass was fetched by it.
    if (retryAt !== null && retryAt <= started) retryAt = null;
    fullAt = more.includes('later') && !more.includes('now') ? now() : null;
    if (more.includes('now')) return 0;
    const next = [more.includes('later') ? REFILL_MS : null, retryAt && retryAt - now()];
    const waits = next.filter((x): x is number => x !== null);
    return waits.length ? Math.max(0, Math.min(...waits)) : null;
  }

  const loop = startLoop({ name: 'notifier', log, idleMs: 30_000, pass, now });
  return {
    kick: () => loop.kick(),
    changed,
    kickAt: (at) => loop.kickAt(at),
    async stop() {
      // Nothing new is fetched; the calls in flight end and record what came of them.
      await loop.stop();
      await scheduler.stop();
    },
  };
}
