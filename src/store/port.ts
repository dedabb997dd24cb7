import type { BudgetStore } from '../api/budget.ts';
import type {
  Announcement,
  ChannelProject,
  FollowUp,
  FollowUpState,
  JobSnapshot,
  JobThread,
  Lease,
  NewFollowUp,
  NewPendingCommand,
  NewThread,
  OutboxFilter,
  OutboxItem,
  PendingCommand,
  PollRecord,
  PollSchedule,
  StartRetry,
} from './records.ts';
import type { StateStore } from './state-port.ts';
import type { WorkspaceStore } from './workspace-port.ts';

/**
 * The store's port: what the bot asks of it, grouped by area (threads and starts, polls and
 * leases, follow-ups, root updates, the outbox, events, projects, traffic figures, digests,
 * buttons; the distributed mode's workspaces in ./workspace-port.ts; the bot's own state,
 * per workspace, in ./state-port.ts). Implemented by ./store.ts over SQLite or PostgreSQL;
 * the entity types are in ./types.ts, which re-exports this interface.
 */
export interface Store extends BudgetStore, WorkspaceStore, StateStore {
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
   * `/agent` that posted them: started, or could not start), then workspaces in turn (each
   * one's oldest change, then each one's next), leaving out `skipTeams`' threads.
   */
  pendingRootUpdates(
    now: number,
    limit: number,
    skipIds?: readonly number[],
    skipTeams?: readonly string[],
  ): Promise<JobThread[]>;
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

  /**
   * Announcements due and not sent, workspaces in turn (each one's oldest, then each one's
   * next), oldest first within a turn; `filter` leaves some out.
   */
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

  /**
   * Records acked commands waiting for their starts, held by `lease`, in one statement;
   * returns their ids in the order given.
   */
  recordPendingCommands(cs: NewPendingCommand[], lease: Lease, now: number): Promise<number[]>;
  /**
   * The record goes, if `owner` still holds it (a lease that ran out is still held until
   * another process claims it): its start ended without a thread, or it expired. False when
   * it was gone (its thread took it, or another process). A thread that starts it takes it
   * in `createThread` instead, in the same transaction.
   */
  takePendingCommand(id: number, owner: string): Promise<boolean>;
  /** The same, for a command known by its response_url (its record's id may be unknown). */
  releasePendingCommand(responseUrl: string, owner: string): Promise<void>;
  /** Whether a thread was started for the command with this response_url. */
  commandStarted(responseUrl: string): Promise<boolean>;
  /**
   * `owner` still holds these (waiting for their start, or starting) until `until`; 0 gives
   * them up at once. Returns the ids it still held (a started one's record is gone).
   */
  renewPendingCommands(ids: readonly number[], owner: string, until: number): Promise<number[]>;
  /** Claims up to `limit` commands whose lease ran out (their process is gone), oldest first. */
  claimPendingCommands(now: number, limit: number, lease: Lease): Promise<PendingCommand[]>;

  /** Records Slack event keys; false if any was seen before (handle at most once). */
  claimEvent(keys: string[], now: number): Promise<boolean>;
  /** Whether an event key was recorded (and not yet forgotten), without recording it. */
  eventSeen(key: string): Promise<boolean>;
  /**
   * Forgets event keys, follow-ups that reached an end, and budget uses older than `before`
   * (a bucket no longer taken from, such as a past digest period's failures, is otherwise
   * never emptied; every budget window is far shorter than the week `before` lies back).
   */
  pruneEvents(before: number): Promise<void>;

  /** The project a channel is bound to, if any. */
  channelProject(teamId: string, channelId: string): Promise<ChannelProject | undefined>;
  /** Binds a channel to a project, replacing any binding it had. */
  bindChannelProject(binding: ChannelProject): Promise<void>;
  /** Back to the configured project; false if the channel was not bound. */
  unbindChannelProject(teamId: string, channelId: string): Promise<boolean>;

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
  /**
   * The database server's clock now, epoch ms; null when the database is a file on this
   * machine (SQLite), whose clock is the process's. Replicas judge leases, staleness and
   * budget windows on this one clock (src/clock.ts).
   */
  databaseTime(): Promise<number | null>;
  close(): Promise<void>;

  /** Announcements recorded and not yet sent (a metric, read at scrape time). */
  outboxDepth(): Promise<number>;
}
