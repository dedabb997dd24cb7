import type { BudgetStore } from '../api/budget.ts';

/**
 * The store: everything the bot must not lose on a restart. One interface, engines behind
 * it (SQLite now; Postgres later for replicas), proven equal by one shared test suite.
 * Times are epoch milliseconds.
 */

/** A job's status as the service reports it, plus our own states around it. */
export type ThreadStatus =
  | 'starting' // root posted, create call not answered yet
  | 'start_failed' // the create call failed; no job
  | 'active'
  | 'completed'
  | 'failed'
  | 'archived'
  | 'lost'; // the service answered 404 for a job we had

export interface JobThread {
  id: number;
  teamId: string;
  channelId: string;
  /** ts of the root message: the thread's key in Slack. */
  threadTs: string;
  userId: string;
  prompt: string;
  jobId: string | null;
  status: ThreadStatus;
  model: string | null;
  repository: string | null;
  ref: string | null;
  prLink: string | null;
  /** Why the job could not be started, shown in the root message. */
  error: string | null;
  /** Follow-ups sent so far; part of an announcement's key, so each round announces anew. */
  round: number;
  /** When the last follow-up was sent, until a poll sees the job active again. */
  followUpAt: number | null;
  /** The root message shows version `rootShownVersion`; it needs an update when behind. */
  rootVersion: number;
  rootShownVersion: number;
  /** When to poll next; null when the job is not watched. */
  nextPollAt: number | null;
  pollIntervalMs: number;
  createdAt: number;
  updatedAt: number;
}

/** What the service told us about a job, as far as the thread shows it. */
export interface JobSnapshot {
  jobId: string;
  status: 'active' | 'completed' | 'failed' | 'archived' | 'lost';
  model: string | null;
  repository: string | null;
  ref: string | null;
  prLink: string | null;
}

export type AnnouncementKind = 'completed' | 'failed' | 'archived' | 'lost';

export interface Announcement {
  /** Unique per (job, round, status): the outbox and the thread check dedupe on it. */
  key: string;
  kind: AnnouncementKind;
  prLink: string | null;
}

export interface OutboxItem {
  id: number;
  threadId: number;
  announcement: Announcement;
  attempts: number;
  createdAt: number;
}

export interface PollSchedule {
  nextPollAt: number | null;
  pollIntervalMs: number;
}

export interface NewThread {
  teamId: string;
  channelId: string;
  threadTs: string;
  userId: string;
  prompt: string;
}

export interface Counts {
  human: number;
  ai: number;
  total: number;
}

/** The outcome of trying to claim a digest period for a channel. */
export type DigestClaim =
  | { state: 'claimed' } // ours to post
  | { state: 'posted' } // done already
  | { state: 'busy'; owner: string } // someone else holds a fresh claim
  | { state: 'stale'; owner: string }; // claimed long ago and never marked posted: check, then post

export interface Store extends BudgetStore {
  createThread(t: NewThread, now: number): Promise<JobThread>;
  getThread(id: number): Promise<JobThread | undefined>;
  findThread(teamId: string, channelId: string, threadTs: string): Promise<JobThread | undefined>;
  /** The create call answered: the thread now is the job. */
  attachJob(
    threadId: number,
    job: JobSnapshot,
    schedule: PollSchedule,
    now: number,
  ): Promise<JobThread>;
  startFailed(threadId: number, error: string, now: number): Promise<JobThread>;
  /** Threads left in 'starting' by a crash before the create call answered. */
  staleStarting(before: number): Promise<JobThread[]>;

  /** Watched jobs whose next poll is due, soonest first. */
  dueJobs(now: number, limit: number): Promise<JobThread[]>;
  /** Earliest next poll among watched jobs, for the poller's sleep. */
  nextDueAt(): Promise<number | null>;
  /**
   * Records a poll's outcome in one transaction: the new state (bumping the root's version
   * when what it shows changed), the next poll, and any announcements into the outbox
   * (ignoring keys already there), so nothing is announced that was not recorded first.
   */
  recordPoll(
    threadId: number,
    /** The round the poll was read in; if a follow-up has started another, nothing is written. */
    round: number,
    snapshot: JobSnapshot | null,
    schedule: PollSchedule,
    announcements: Announcement[],
    now: number,
  ): Promise<boolean>;
  /**
   * A follow-up was accepted (or may have been): next round, watched again. With
   * `awaitingRestart`, a final status is not believed until the job is seen active.
   */
  recordFollowUp(
    threadId: number,
    snapshot: JobSnapshot,
    schedule: PollSchedule,
    now: number,
    awaitingRestart: boolean,
  ): Promise<void>;

  threadsNeedingRootUpdate(limit: number): Promise<JobThread[]>;
  markRootShown(threadId: number, version: number): Promise<void>;

  pendingAnnouncements(now: number, limit: number): Promise<OutboxItem[]>;
  /**
   * Counts an attempt before it is made, so a crash mid-post is known on restart, and
   * leases the item until `leaseUntil` (it is not pending meanwhile). Only succeeds if the
   * attempts are still `seen`: two notifiers never post the same item at once.
   */
  markAnnouncementAttempt(id: number, seen: number, leaseUntil: number): Promise<boolean>;
  markAnnouncementSent(id: number, now: number): Promise<void>;
  markAnnouncementRetry(id: number, nextAttemptAt: number, error: string): Promise<void>;

  /** Records Slack event keys; false if any was seen before (handle at most once). */
  claimEvent(keys: string[], now: number): Promise<boolean>;
  pruneEvents(before: number): Promise<void>;

  getVisitorPoint(rangeKey: string): Promise<Counts | undefined>;
  putVisitorPoint(rangeKey: string, counts: Counts, now: number): Promise<void>;

  /**
   * Claims (channel, period) for `owner` unless it is posted or freshly claimed by someone.
   * A claim older than `staleMs` that was never marked posted is taken over ('stale').
   */
  claimDigest(
    channelId: string,
    periodKey: string,
    owner: string,
    now: number,
    staleMs: number,
  ): Promise<DigestClaim>;
  markDigestPosted(channelId: string, periodKey: string, now: number): Promise<void>;

  close(): Promise<void>;

  /** Resolves when the database answers a trivial query (readiness). */
  ping(): Promise<void>;
  /** Announcements recorded and not yet sent (a metric, read at scrape time). */
  outboxDepth(): Promise<number>;
}
