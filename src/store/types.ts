import type { BudgetStore } from '../api/budget.ts';

/**
 * The store: everything the bot must not lose on a restart, shared by every replica on the
 * same database. One interface, two engines behind it (SQLite for one process, PostgreSQL
 * for several), proven equal by one shared test suite. Times are epoch milliseconds.
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
  /** ts of the thread's parent message: the thread's key in Slack. */
  threadTs: string;
  /**
   * ts of the bot's root message (the one that shows the job and is edited in place): the
   * thread's parent itself for `/agent` and DMs, a reply inside the thread for a mention.
   * Starts as a placeholder (`pending:<marker>`) until the post is confirmed.
   */
  rootTs: string;
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
  /** Since when polls keep failing in a way that will not fix itself (key, answer shape). */
  pollFailingSince: number | null;
  /**
   * When the job last moved: attached, followed up, or seen with a new status or PR link.
   * Null for threads from before it was kept.
   */
  changedAt: number | null;
  /** The docs project the job belongs to; null for threads from before it was kept. */
  projectId: string | null;
  /** Whether the failed start may be retried from its root's button (see StartRetry). */
  startRetry?: StartRetry | null;
  /** The requester who stopped the watching of this job; null while it is watched. */
  unwatchedBy?: string | null;
  /** The status reaction the root message carries now (no colons); null before the first. */
  rootReaction?: string | null;
  /** Earlier thread messages sent with the prompt as context (a mention in a human thread). */
  contextMessages: number | null;
}

/**
 * A failed start that a retry may fix: 'safe' when the create provably did not take effect
 * (budget, 429, connection refused), 'confirm' when it may have (a timeout, a 5xx, a
 * restart mid-call): the button then asks the person to check their pull requests first.
 */
export type StartRetry = 'safe' | 'confirm';

/** What the service told us about a job, as far as the thread shows it. */
export interface JobSnapshot {
  jobId: string;
  status: 'active' | 'completed' | 'failed' | 'archived' | 'lost';
  model: string | null;
  repository: string | null;
  ref: string | null;
  prLink: string | null;
}

/** A job's outcome, or a notice: something the thread must be told (`detail` says what). */
export type AnnouncementKind = 'completed' | 'failed' | 'archived' | 'lost' | 'notice';

export interface Announcement {
  /** Unique per (job, round, status), or per notice: the outbox and the thread check dedupe on it. */
  key: string;
  kind: AnnouncementKind;
  prLink: string | null;
  /** A notice's words (plain text, escaped when shown). */
  detail?: string | null;
}

/**
 * A thread reply on its way to the agent: 'received' (recorded, not sent yet), 'sending'
 * (the POST may be in flight), then 'sent', 'refused' (not sent, and the person was told),
 * or 'uncertain' (a crash cut the POST short: the thread was told it may not have arrived).
 */
export type FollowUpState = 'received' | 'sending' | 'sent' | 'refused' | 'uncertain';

export interface FollowUp {
  id: number;
  threadId: number;
  /** `channel:ts` of the reply: one follow-up per Slack message. */
  replyKey: string;
  replyTs: string;
  userId: string;
  text: string;
  state: FollowUpState;
  createdAt: number;
  updatedAt: number;
}

export interface NewFollowUp {
  threadId: number;
  replyKey: string;
  replyTs: string;
  userId: string;
  text: string;
}

export interface OutboxItem {
  id: number;
  threadId: number;
  /** The thread's channel: where the announcement goes. */
  channelId: string;
  announcement: Announcement;
  attempts: number;
  createdAt: number;
}

/** Which pending announcements to leave out of a fetch (all when empty). */
export interface OutboxFilter {
  /** Only these kinds. */
  kinds?: readonly AnnouncementKind[];
  /** Not these (the notifier's queue holds them already). */
  skipIds?: readonly number[];
  /** Not in these channels (their queue is full). */
  skipChannels?: readonly string[];
}

export interface PollSchedule {
  nextPollAt: number | null;
  pollIntervalMs: number;
}

/**
 * A claim on shared work: `owner` (one process) holds it until `until`. Past that, another
 * replica may take the work over, and the first one's late writes are refused (fencing).
 */
export interface Lease {
  owner: string;
  until: number;
}

/** A poll's outcome, recorded in one transaction before anything is said in Slack. */
export interface PollRecord {
  threadId: number;
  /** The round the poll was read in; if a follow-up has started another, nothing is written. */
  round: number;
  /** What the service said; null when the poll failed (only the schedule changes). */
  snapshot: JobSnapshot | null;
  schedule: PollSchedule;
  announcements: Announcement[];
  now: number;
  /** The poller's lease: if another replica took the job over meanwhile, nothing is written. */
  owner?: string;
  /**
   * Since when polls keep failing for good reasons (null: they work again); left as it was
   * when undefined (a transient failure neither starts nor ends a streak).
   */
  failingSince?: number | null;
}

export interface NewThread {
  teamId: string;
  channelId: string;
  threadTs: string;
  userId: string;
  prompt: string;
  /** The root's placeholder when it is posted inside an existing thread (a mention). */
  rootTs?: string;
  contextMessages?: number;
  projectId?: string | null;
}

/** A channel bound to a docs project other than the configured one (`/agent project`). */
export interface ChannelProject {
  teamId: string;
  channelId: string;
  projectId: string;
  /** Who bound it, and when. */
  setBy: string;
  setAt: number;
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

/** The headline figures of the last traffic report built (the App Home shows them). */
export interface ReportHeadline {
  /** The report's range, `from` inclusive and `to` exclusive (YYYY-MM-DD), in `timeZone`. */
  from: string;
  to: string;
  timeZone: string;
  totals: Counts;
  previousTotals: Counts;
  /** Whether page scanning stopped early (the figures above are complete either way). */
  partial: boolean;
  generatedAt: number;
}

export interface Store extends BudgetStore {
  createThread(t: NewThread, now: number): Promise<JobThread>;
  getThread(id: number): Promise<JobThread | undefined>;
  /** A person's jobs still starting or running, newest first (`/agent status`). */
  activeThreadsOf(teamId: string, userId: string, limit: number): Promise<JobThread[]>;
  findThread(teamId: string, channelId: string, threadTs: string): Promise<JobThread | undefined>;
  /**
   * A person's jobs in any state whose root message is posted, newest first (the App Home).
   */
  recentThreadsOf(teamId: string, userId: string, limit: number): Promise<JobThread[]>;
  /** The create call answered: the thread now is the job. */
  attachJob(
    threadId: number,
    job: JobSnapshot,
    schedule: PollSchedule,
    now: number,
  ): Promise<JobThread>;
  /**
   * The job could not be started. Only a thread still 'starting' changes, so two replicas
   * recovering the same interrupted start settle it once; undefined when it had moved on.
   */
  startFailed(
    threadId: number,
    error: string,
    now: number,
    retry?: StartRetry | null,
  ): Promise<JobThread | undefined>;
  /** Threads left in 'starting' (since `before`: first start or retry) by a crash before the create call answered. */
  staleStarting(before: number): Promise<JobThread[]>;

  /**
   * Leases up to `limit` watched jobs whose poll is due and that no live lease holds,
   * soonest first: each due job is polled by one replica at a time.
   */
  claimDueJobs(now: number, limit: number, lease: Lease): Promise<JobThread[]>;
  /** When the next poll falls due (or a lease holding one ends), for the poller's sleep. */
  nextDueAt(): Promise<number | null>;
  /**
   * Records a poll's outcome in one transaction: the new state (bumping the root's version
   * when what it shows changed), the next poll, and any announcements into the outbox
   * (ignoring keys already there), so nothing is announced that was not recorded first.
   * Releases the poll lease. False when superseded (a new round, or another owner's lease).
   */
  recordPoll(p: PollRecord): Promise<boolean>;
  /**
   * Records several polls' outcomes in one transaction, each exactly as `recordPoll` would
   * (fenced one by one: a superseded item is refused, the others are written). Answers in
   * the order given.
   */
  recordPolls(ps: PollRecord[]): Promise<boolean[]>;
  /** Gives back every lease `owner` holds (graceful shutdown), so others need not wait. */
  releaseLeases(owner: string): Promise<void>;

  /**
   * The root message is posted (a thread created before it holds a placeholder ts). False
   * when the thread is no longer starting (a recovery pass settled it meanwhile).
   */
  setThreadTs(threadId: number, threadTs: string, now: number): Promise<boolean>;
  /** The same for a root posted inside an existing thread (the thread's key stays). */
  setRootTs(threadId: number, rootTs: string, now: number): Promise<boolean>;
  /** A start whose root was never posted: nothing to show, nothing to keep. */
  forgetStart(threadId: number): Promise<void>;

  /**
   * Records a thread reply before it is sent to the agent, claiming its Slack event keys
   * in the same transaction; undefined when the reply (or its event) was handled before.
   */
  recordFollowUp(r: NewFollowUp, eventKeys: string[], now: number): Promise<FollowUp | undefined>;
  findFollowUp(replyKey: string): Promise<FollowUp | undefined>;
  /** Moves a follow-up from one of `from` to `to`; false if it was not in one of them. */
  moveFollowUp(id: number, from: FollowUpState[], to: FollowUpState, now: number): Promise<boolean>;
  /** Follow-ups in `state` not touched since `before`, oldest first. */
  staleFollowUps(state: FollowUpState, before: number, limit: number): Promise<FollowUp[]>;
  /**
   * A follow-up cut short mid-send becomes 'uncertain' and its notice goes into the outbox,
   * in one transaction: the thread is told once. False if another replica got there first.
   */
  followUpUncertain(f: FollowUp, notice: Announcement, now: number): Promise<boolean>;
  /**
   * A follow-up was accepted (or may have been): next round, watched again. With
   * `awaitingRestart`, a final status is not believed until the job is seen active.
   */
  startRound(
    threadId: number,
    snapshot: JobSnapshot,
    schedule: PollSchedule,
    now: number,
    awaitingRestart: boolean,
  ): Promise<void>;

  /**
   * Threads whose root message is behind what they hold and that no live lease holds, not
   * leased by this: roots never edited since they were posted first (that edit answers the
   * `/agent` that posted them: started, or could not start), then the oldest change.
   */
  pendingRootUpdates(now: number, limit: number, skipIds?: readonly number[]): Promise<JobThread[]>;
  /**
   * Leases one root update if it is still due and free, right before it is made, and
   * returns the thread as it is now (coalescing: one update however many changes piled up);
   * undefined if it is shown already or another replica holds it.
   */
  claimRootUpdate(threadId: number, now: number, lease: Lease): Promise<JobThread | undefined>;
  /** The root now shows `version` (never moves back); releases `owner`'s lease. */
  markRootShown(threadId: number, version: number, owner: string): Promise<void>;
  /** Slack said "later": keep the lease until then, so nobody asks sooner. */
  deferRootUpdate(threadId: number, owner: string, until: number): Promise<void>;

  /** Announcements due and not sent, oldest first; `filter` leaves some out. */
  pendingAnnouncements(now: number, limit: number, filter?: OutboxFilter): Promise<OutboxItem[]>;
  /**
   * Counts an attempt before it is made, so a crash mid-post is known on restart, and
   * leases the item until `leaseUntil` (it is not pending meanwhile). Only succeeds if the
   * attempts are still `seen`: two notifiers never post the same item at once. The new
   * attempt number fences what follows: marks for an older attempt are refused.
   */
  markAnnouncementAttempt(id: number, seen: number, leaseUntil: number): Promise<boolean>;
  markAnnouncementSent(id: number, attempt: number, now: number): Promise<boolean>;
  markAnnouncementRetry(
    id: number,
    attempt: number,
    nextAttemptAt: number,
    error: string,
  ): Promise<boolean>;

  /** Records Slack event keys; false if any was seen before (handle at most once). */
  claimEvent(keys: string[], now: number): Promise<boolean>;
  /** Forgets event keys, and follow-ups that reached an end, older than `before`. */
  pruneEvents(before: number): Promise<void>;

  /** The project a channel is bound to, if any. */
  channelProject(teamId: string, channelId: string): Promise<ChannelProject | undefined>;
  /** Binds a channel to a project, replacing any binding it had. */
  bindChannelProject(binding: ChannelProject): Promise<void>;
  /** Back to the configured project; false if the channel was not bound. */
  unbindChannelProject(teamId: string, channelId: string): Promise<boolean>;

  /** A stored chart point and when its counts were fetched. */
  getVisitorPoint(rangeKey: string): Promise<(Counts & { fetchedAt: number }) | undefined>;
  /** Stores a chart point, replacing the one kept under that key (a refresh after settling). */
  putVisitorPoint(rangeKey: string, counts: Counts, now: number): Promise<void>;
  /** Keeps the last report's headline, replacing the one before (the App Home shows it). */
  putReportHeadline(h: ReportHeadline): Promise<void>;
  lastReportHeadline(): Promise<ReportHeadline | undefined>;

  /**
   * Claims (channel, period) for `owner` unless it is posted or claimed by someone whose
   * last sign of life (claim or heartbeat) is younger than `staleMs`. An older claim never
   * marked posted is taken over ('stale').
   */
  claimDigest(
    channelId: string,
    periodKey: string,
    owner: string,
    now: number,
    staleMs: number,
  ): Promise<DigestClaim>;
  /** The owner is still at it; false if the claim is no longer `owner`'s (taken over). */
  heartbeatDigest(
    channelId: string,
    periodKey: string,
    owner: string,
    now: number,
  ): Promise<boolean>;
  markDigestPosted(
    channelId: string,
    periodKey: string,
    owner: string,
    now: number,
  ): Promise<boolean>;

  /**
   * A person clicked Retry on a start that failed for a retryable reason: the thread goes
   * back to 'starting' (one compare-and-set, so one click of many, across replicas, wins);
   * undefined when it is not (or no longer) a retryable failed start.
   */
  claimRetry(threadId: number, now: number): Promise<JobThread | undefined>;
  /**
   * The requester stops the watching of an active job: no more polls (an in-flight poll's
   * answer is refused) until a follow-up starts a new round. Undefined when it was not
   * being watched.
   */
  stopWatching(threadId: number, userId: string, now: number): Promise<JobThread | undefined>;
  /** The root message now carries this status reaction. */
  markReactionShown(threadId: number, name: string | null): Promise<void>;

  /** A cheap round trip to the database (readiness). */
  ping(): Promise<void>;
  close(): Promise<void>;

  /** Announcements recorded and not yet sent (a metric, read at scrape time). */
  outboxDepth(): Promise<number>;
}
