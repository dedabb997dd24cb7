import { ChatError, NOT_INSTALLED } from '../chat-errors.ts';
import type { Logger } from '../log.ts';
import type { OutboxItem, Store } from '../store/types.ts';
import type { NotifierMethod } from './channel-queues.ts';
import type { JobChat, JobMetrics } from './ports.ts';

/** What one queued item needs when its turn comes. */
export interface SendContext {
  store: Store;
  chat: JobChat;
  log: Logger;
  metrics: JobMetrics;
  owner: string;
  leaseMs: number;
  now: () => number;
  /**
   * Slack said "later" (`delay` ms): the item is put off that long, and a 429 pauses what
   * Slack limits: posts in `channelId` (chat.postMessage is limited per channel), or every
   * call of the method with the workspace's token (null: a call the scheduler does not pace).
   */
  later(
    err: unknown,
    method: NotifierMethod | null,
    delay: number,
    where: { teamId: string; channelId?: string },
  ): void;
}

const MAX_RETRY_MS = 5 * 60_000;

/**
 * Posts one announcement: leases it, checks the thread first if it was attempted before,
 * posts, and records what came of it (fenced by the attempt). False when it made no call:
 * the thread is gone or another replica has the item.
 */
export async function announce(c: SendContext, item: OutboxItem): Promise<boolean> {
  const { store, chat, log, metrics, now } = c;
  const thread = await store.getThread(item.threadId);
  if (!thread) return false;
  const { key, kind } = item.announcement;
  const ids = { threadId: thread.id, jobId: thread.jobId, key };
  // The lease comes first, so two replicas never check or post the same item at once;
  // the attempt number it hands out fences every mark that follows.
  if (!(await store.markAnnouncementAttempt(item.id, item.attempts, now() + c.leaseMs))) {
    log.debug(ids, 'announce.taken_by_another');
    return false;
  }
  const attempt = item.attempts + 1;
  const fenced = async (marked: Promise<boolean>) => {
    if (!(await marked)) log.warn({ ...ids, attempt }, 'announce.lease_lost');
  };
  let calling: NotifierMethod | null = null; // conversations.replies, first
  try {
    if (item.attempts > 0 && (await chat.hasAnnounced(thread, key))) {
      await fenced(store.markAnnouncementSent(item.id, attempt, now()));
      metrics.announcement('already_in_thread');
      log.info(ids, 'announce.already_in_thread');
      return true;
    }
    calling = 'chat.postMessage';
    await chat.announce(thread, item.announcement);
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
      c.later(err, calling, delay, { teamId: item.teamId, channelId: item.channelId });
      metrics.announcement('retried');
      log.warn({ ...ids, err, retryInMs: delay }, 'announce.deferred');
    } else if (isNotInstalled(err)) {
      // The workspace has no install: the chat side settled this item with the rest of the
      // workspace's, and said so in one line for the workspace.
      metrics.announcement('dropped');
      log.debug(ids, 'announce.not_installed');
    } else {
      // Slack refused for good (channel archived, bot removed): give up loudly.
      await fenced(store.markAnnouncementSent(item.id, attempt, now()));
      metrics.announcement('dropped');
      log.error({ ...ids, err }, 'announce.dropped');
    }
  }
  return true;
}

/**
 * Brings one root message up to date: leases it as it is now, edits it, and records that.
 * False when it made no call: shown meanwhile, or another replica's.
 */
export async function showRoot(c: SendContext, threadId: number): Promise<boolean> {
  const { store, chat, log, now } = c;
  const lease = { owner: c.owner, until: now() + c.leaseMs };
  // Claimed as it is now: every change since it was queued is shown by this one edit.
  const thread = await store.claimRootUpdate(threadId, now(), lease);
  if (!thread) return false; // shown meanwhile, or another replica's
  try {
    await chat.showJob(thread);
    // The reaction follows the edit, and shares its lease, pacing and retries: it changes
    // only with the status, so it never adds calls beyond the edits' Tier 3 budget.
    const reaction = chat.showStatus ? await chat.showStatus(thread) : undefined;
    if (reaction !== undefined && reaction !== (thread.rootReaction ?? null))
      await store.markReactionShown(thread.id, reaction);
    await store.markRootShown(thread.id, thread.rootVersion, c.owner);
    log.debug({ threadId: thread.id, status: thread.status }, 'root.updated');
  } catch (err) {
    if (isNotInstalled(err)) {
      // Settled by the chat side with the workspace's other roots, in one line for them all.
      log.debug({ threadId: thread.id }, 'root.not_installed');
    } else if (err instanceof ChatError && err.retryable) {
      const delay = err.retryAfterMs ?? 5_000;
      // Keeping the lease until then is the back-off: no replica asks sooner.
      await store.deferRootUpdate(thread.id, c.owner, now() + delay);
      c.later(err, 'chat.update', delay, { teamId: thread.teamId });
      log.warn({ err, threadId: thread.id }, 'root.update_deferred');
    } else {
      // The message is gone or the channel closed: retrying cannot help.
      await store.markRootShown(thread.id, thread.rootVersion, c.owner);
      log.error({ err, threadId: thread.id }, 'root.update_failed');
    }
  }
  return true;
}

/** Settled already by the chat side (src/chat-errors.ts, NOT_INSTALLED). */
function isNotInstalled(err: unknown): boolean {
  return err instanceof ChatError && err.code === NOT_INSTALLED && !err.retryable;
}
