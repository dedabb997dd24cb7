import type { Announcement, JobOrigin, JobThread, WorkspaceRef } from '../store/types.ts';

/**
 * What the jobs feature needs from the chat side, in its own words. The Slack
 * implementation lives in `src/slack/`; tests of this feature use a fake of it. Every call
 * names the workspace it is for (a thread is one: its team and org), so that the chat side
 * talks to each workspace with its own install's token.
 */
export interface JobChat {
  /**
   * Posts the root message of a new job thread ("starting"), tagged with `marker` so that
   * it can be found again if the bot dies before it records the message's ts. With
   * `threadTs`, it is posted as a reply in that existing thread (a mention).
   */
  postRoot(
    ws: WorkspaceRef,
    req: {
      channelId: string;
      userId: string;
      prompt: string;
      marker: string;
      threadTs?: string;
      contextMessages?: number;
      origin?: JobOrigin;
    },
  ): Promise<{ ts: string }>;
  /**
   * The ts of the root message tagged with `marker`, posted since `sinceMs`; null if none.
   * Looked for among the channel's top-level messages, or inside thread `threadTs` when given.
   */
  findRoot(
    ws: WorkspaceRef,
    channelId: string,
    marker: string,
    sinceMs: number,
    threadTs?: string,
  ): Promise<string | null>;
  /** Brings the root message in line with the thread's current state. */
  showJob(thread: JobThread): Promise<void>;
  /**
   * Puts the status reaction for the thread's state on its root, removing the one it
   * carried (`thread.rootReaction`); returns the reaction it carries now. Called right after
   * `showJob`, in the same rate-limited, retried step.
   */
  showStatus?(thread: JobThread): Promise<string | null>;
  /** Posts an announcement as a thread reply, tagged with its key. */
  announce(thread: JobThread, announcement: Announcement): Promise<void>;
  /** Whether the thread already holds a reply tagged with this key (crash recovery). */
  hasAnnounced(thread: JobThread, key: string): Promise<boolean>;
  /** Marks a thread reply as handed to the agent (a reaction). */
  acknowledgeReply(ws: WorkspaceRef, channelId: string, ts: string): Promise<void>;
  /** A message only this user sees, in the thread when given. */
  tellUser(
    ws: WorkspaceRef,
    req: {
      channelId: string;
      userId: string;
      text: string;
      threadTs?: string;
    },
  ): Promise<void>;
}

/** What became of a thread reply: 'uncertain' when it may or may not have reached the job. */
export const FOLLOW_UP_OUTCOMES = ['sent', 'refused', 'uncertain', 'ignored', 'duplicate'] as const;
export type FollowUpOutcome = (typeof FOLLOW_UP_OUTCOMES)[number];
export const POLL_OUTCOMES = ['changed', 'unchanged', 'failed', 'lost', 'superseded'] as const;
export type PollOutcome = (typeof POLL_OUTCOMES)[number];
export const ANNOUNCEMENT_RESULTS = ['sent', 'retried', 'already_in_thread', 'dropped'] as const;
export type AnnouncementResult = (typeof ANNOUNCEMENT_RESULTS)[number];

/**
 * What the jobs feature counts about itself, in its own words; the Prometheus side is in
 * src/app/metrics.ts. Each call is cheap and synchronous, and never throws.
 */
export interface JobMetrics {
  /** The service accepted a create: a job exists. */
  jobCreated(): void;
  /** A thread reply was handled. */
  followUp(outcome: FollowUpOutcome): void;
  /** A poll ran `lagMs` after it was due (0 or more). */
  poll(outcome: PollOutcome, lagMs: number): void;
  /** The service answered a poll 429: all polling of this process pauses for `ms`. */
  pollsPaused(ms: number): void;
  /** An outbox item was handled. */
  announcement(result: AnnouncementResult): void;
}

/** For code and tests that do not count anything. */
export const noJobMetrics: JobMetrics = {
  jobCreated() {},
  followUp() {},
  poll() {},
  pollsPaused() {},
  announcement() {},
};

/**
 * Tells the background loops that something changed: the notifier shows it now, and when
 * `pollAt` is given, a job needs polling then (the poller wakes no later than that; a start
 * that failed leaves nothing to poll, so the poller sleeps on).
 */
export type Wake = (pollAt?: number) => void;
