import { ChatError } from '../chat-errors.ts';
import type { Logger } from '../log.ts';
import type { Store } from '../store/types.ts';
import { type Loop, startLoop } from './loop.ts';
import { type JobChat, type JobMetrics, noJobMetrics } from './ports.ts';

export interface NotifierDeps {
  store: Store;
  chat: JobChat;
  log: Logger;
  /**
   * Least time between two messages in one channel. Slack allows about one message per
   * second per channel, and chat.update is Tier 3 (Slack rate limits).
   */
  channelGapMs?: number;
  metrics?: JobMetrics;
  /** Names this process in the leases it takes on root updates. */
  owner: string;
  /**
   * How long a claim on a root update or an announcement lasts: longer than a Slack call
   * can take (15 s timeout), so a post in flight is not taken over by another replica.
   */
  leaseMs: number;
  now?: () => number;
}

const BATCH = 20;
const MAX_RETRY_MS = 5 * 60_000;

/**
 * Turns recorded state into Slack messages: brings root messages up to date (one
 * `chat.update` per thread however many changes piled up) and posts the outbox's
 * announcements. An announcement that was attempted before (a crash or a failed call
 * mid-post) is posted again only if the thread does not already hold it.
 */
export function startNotifier(deps: NotifierDeps): Loop {
  const { store, chat } = deps;
  const log = deps.log.child({ component: 'notifier' });
  const now = deps.now ?? Date.now;
  const gapMs = deps.channelGapMs ?? 1_000;
  const metrics = deps.metrics ?? noJobMetrics;
  const lastPost = new Map<string, number>();

  async function paced(channelId: string, send: () => Promise<void>): Promise<void> {
    const wait = (lastPost.get(channelId) ?? 0) + gapMs - now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    try {
      await send();
    } finally {
      lastPost.set(channelId, now());
    }
  }

  async function updateRoots(): Promise<number | null> {
    let retryIn: number | null = null;
    const lease = { owner: deps.owner, until: now() + deps.leaseMs };
    const claimed = await store.claimRootUpdates(now(), BATCH, lease);
    // A full batch means more may be waiting: come back at once rather than at the next kick.
    if (claimed.length === BATCH) retryIn = 0;
    for (const thread of claimed) {
      try {
        await paced(thread.channelId, () => chat.showJob(thread));
        await store.markRootShown(thread.id, thread.rootVersion, deps.owner);
        log.debug({ threadId: thread.id, status: thread.status }, 'root.updated');
      } catch (err) {
        if (err instanceof ChatError && err.retryable) {
          const delay = err.retryAfterMs ?? 5_000;
          // Keeping the lease until then is the back-off: no replica asks sooner.
          await store.deferRootUpdate(thread.id, deps.owner, now() + delay);
          retryIn = Math.min(retryIn ?? Infinity, delay);
          log.warn({ err, threadId: thread.id }, 'root.update_deferred');
        } else {
          // The message is gone or the channel closed: retrying cannot help.
          await store.markRootShown(thread.id, thread.rootVersion, deps.owner);
          log.error({ err, threadId: thread.id }, 'root.update_failed');
        }
      }
    }
    return retryIn;
  }

  async function postAnnouncements(): Promise<number | null> {
    let retryIn: number | null = null;
    const pending = await store.pendingAnnouncements(now(), BATCH);
    if (pending.length === BATCH) retryIn = 0; // more may be waiting
    for (const item of pending) {
      const thread = await store.getThread(item.threadId);
      if (!thread) continue;
      const { key, kind } = item.announcement;
      const ids = { threadId: thread.id, jobId: thread.jobId, key };
      // The lease comes first, so two replicas never check or post the same item at once;
      // the attempt number it hands out fences every mark that follows.
      if (!(await store.markAnnouncementAttempt(item.id, item.attempts, now() + deps.leaseMs))) {
        log.debug(ids, 'announce.taken_by_another');
        continue;
      }
      const attempt = item.attempts + 1;
      const fenced = async (marked: Promise<boolean>) => {
        if (!(await marked)) log.warn({ ...ids, attempt }, 'announce.lease_lost');
      };
      try {
        if (item.attempts > 0 && (await chat.hasAnnounced(thread, key))) {
          await fenced(store.markAnnouncementSent(item.id, attempt, now()));
          metrics.announcement('already_in_thread');
          log.info(ids, 'announce.already_in_thread');
          continue;
        }
        await paced(thread.channelId, () => chat.announce(thread, item.announcement));
        await fenced(store.markAnnouncementSent(item.id, attempt, now()));
        metrics.announcement('sent');
        log.info({ ...ids, kind, latencyMs: now() - item.createdAt }, 'announce.sent');
      } catch (err) {
        const retryable = !(err instanceof ChatError) || err.retryable;
        const delay =
          err instanceof ChatError && err.retryAfterMs !== undefined
            ? err.retryAfterMs
            : Math.min(MAX_RETRY_MS, 2_000 * 2 ** item.attempts);
        if (retryable) {
          const why = String((err as Error).message);
          await fenced(store.markAnnouncementRetry(item.id, attempt, now() + delay, why));
          retryIn = Math.min(retryIn ?? Infinity, delay);
          metrics.announcement('retried');
          log.warn({ ...ids, err, retryInMs: delay }, 'announce.deferred');
        } else {
          // Slack refused for good (channel archived, bot removed): give up loudly.
          await fenced(store.markAnnouncementSent(item.id, attempt, now()));
          metrics.announcement('dropped');
          log.error({ ...ids, err }, 'announce.dropped');
        }
      }
    }
    return retryIn;
  }

  async function pass(): Promise<number | null> {
    // Announcements first: under a backlog, the PR link is what people wait for, and root
    // edits (which keep coming while jobs change) must not keep it waiting.
    const b = await postAnnouncements();
    const a = await updateRoots();
    const next = [a, b].filter((x): x is number => x !== null);
    return next.length ? Math.min(...next) : null;
  }

  return startLoop({ name: 'notifier', log, idleMs: 30_000, pass });
}
