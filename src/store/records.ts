/**
 * What the store keeps and answers (threads, follow-ups, announcements, leases, ...), the
 * records of the `Store` interface in ./port.ts; those of the reports and insights are in
 * ./state-records.ts. Times are epoch milliseconds.
 */

/**
 * The Slack workspace a conversation belongs to: its team and, in an Enterprise Grid org, the
 * org (which finds an org-wide install serving the team). Null or undefined: none, or not
 * known (threads from single-workspace mode, or from before it was kept).
 */
export interface WorkspaceRef {
  teamId: string;
  enterpriseId?: string | null | undefined;
}

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
  /** The team's Enterprise Grid org, when it has one (absent for threads before 0018). */
  enterpriseId?: string;
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
  /** The message the job was asked from, when not typed (an insight); null for most. */
  origin?: JobOrigin | null;
  /** The insight gap it was drafted from (absent for most jobs). */
  gapId?: number;
}

/** A link to the message a job was asked from, and what it was ("an unanswered question"). */
export interface JobOrigin {
  url: string;
  label: string;
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
  /** The thread's workspace: whose token posts it, and whose share of the notifier it uses. */
  teamId: string;
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
  /** Not of these workspaces (they hold their share of the notifier's queue already). */
  skipTeams?: readonly string[];
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
  /** The team's Enterprise Grid org, if any: how its install is found (an org-wide one). */
  enterpriseId?: string | null | undefined;
  channelId: string;
  threadTs: string;
  userId: string;
  prompt: string;
  /** The root's placeholder when it is posted inside an existing thread (a mention). */
  rootTs?: string;
  contextMessages?: number;
  projectId?: string | null;
  origin?: JobOrigin;
  /** The insight gap it is drafted from: the gap's job is its latest thread. */
  gapId?: number;
  /**
   * The acked command this thread starts (src/jobs/pending-commands.ts): its record is
   * deleted in the transaction that inserts the thread, so that a crash leaves exactly one
   * of the two, never both and never neither; and a command has one thread at most.
   */
  command?: CommandRef;
}

/** The slash command a start is for: its response_url (one per typed command) and who holds its record. */
export interface CommandRef {
  responseUrl: string;
  owner: string;
}

/**
 * A command that already has its thread: another process started it (it took the command
 * over when its lease ran out, say while the database was away), so this one records nothing.
 */
export class CommandTakenOver extends Error {
  constructor() {
    super('the command already has its thread');
    this.name = 'CommandTakenOver';
  }
}

/** An acked `/agent <prompt>` to be started (the prompt as typed, decoded). */
export interface NewPendingCommand {
  teamId: string;
  /** The team's Enterprise Grid org, if any. */
  enterpriseId?: string | null | undefined;
  channelId: string;
  userId: string;
  text: string;
  /** Where the person is answered (valid 30 minutes, 5 posts). */
  responseUrl: string;
  /** A DM or group DM, when the command said so. */
  conversation?: 'channel' | 'im' | 'mpim' | null;
}

/** A recorded command, held by `owner` until `leaseUntil` (renewed while it waits). */
export interface PendingCommand extends NewPendingCommand {
  id: number;
  receivedAt: number;
  owner: string;
  leaseUntil: number;
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
