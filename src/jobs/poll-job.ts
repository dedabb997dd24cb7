import type { ApiClient } from '../api/client.ts';
import {
  ApiError,
  Forbidden,
  MalformedResponse,
  NotConnected,
  NotFound,
  RateLimited,
  Unauthorized,
} from '../api/errors.ts';
import { isFinalStatus } from '../api/schemas.ts';
import type { Logger } from '../log.ts';
import type { Announcement, JobSnapshot, JobThread, PollRecord } from '../store/types.ts';
import { type BackoffOptions, freshFor, nextPollDelay } from './backoff.ts';
import { withDeadline } from './deadline.ts';
import type { PollOutcome } from './ports.ts';
import { docsWorkspaceOf, toSnapshot } from './snapshot.ts';

export interface JobPollDeps {
  api: Pick<ApiClient, 'getJob'>;
  log: Logger;
  backoff: BackoffOptions;
  owner: string;
  followUpGraceMs: number;
  troubleAfterMs: number;
  /** One attempt per poll, cut off after this: the schedule is the retry. */
  requestTimeoutMs: number;
  /** Queues the outcome; resolves once it is written (false: superseded). */
  record: (p: PollRecord) => Promise<boolean>;
  /** Aborted on stop: a poll cut short records nothing and is polled after the restart. */
  stopping: AbortSignal;
  /** The service answered 429: the polls of the thread's project wait; answers until when. */
  rateLimited: (err: RateLimited, thread: JobThread) => number;
  /** The GET ended, other than by a 429 or a stop, after `ms`: the pool's width follows it. */
  timed: (ms: number) => void;
  now: () => number;
  random: (() => number) | undefined;
}

/** What one poll came to; `nextPollAt` is when it asked to be polled again (if recorded). */
export interface PollResult {
  outcome: PollOutcome;
  /** Something changed that the notifier should show or announce. */
  show: boolean;
  nextPollAt: number | null;
}

export function announcementKey(jobId: string, round: number, kind: string): string {
  return `${jobId}:${round}:${kind}`;
}

/**
 * One poll of one leased job: a single GET, then its outcome (state, next poll,
 * announcements into the outbox) recorded before anything is said in Slack. Undefined when
 * a stop cut it short.
 */
export function createJobPoll(deps: JobPollDeps) {
  const { api, backoff, now, log } = deps;
  const fresh = freshFor(backoff);
  const record = (thread: JobThread, p: Omit<PollRecord, 'threadId' | 'round' | 'now' | 'owner'>) =>
    deps.record({ threadId: thread.id, round: thread.round, now: now(), owner: deps.owner, ...p });

  async function pollJob(thread: JobThread, deadlineMs: number): Promise<PollResult | undefined> {
    const jobId = thread.jobId;
    if (!jobId) return undefined;
    const started = performance.now();
    try {
      const job = await withDeadline(
        'job.get',
        deadlineMs,
        (signal) =>
          api.getJob(jobId, {
            signal,
            retries: 0,
            timeoutMs: deps.requestTimeoutMs,
            project: thread.projectId ?? undefined,
            workspace: docsWorkspaceOf(thread),
          }),
        deps.stopping,
      );
      deps.timed(performance.now() - started);
      return await answered(thread, jobId, toSnapshot(job), started);
    } catch (err) {
      if (deps.stopping.aborted) return undefined;
      if (err instanceof ApiError && !(err instanceof RateLimited))
        deps.timed(performance.now() - started);
      if (err instanceof NotFound) return lost(thread, jobId);
      if (!(err instanceof ApiError)) throw err;
      return failed(thread, jobId, err);
    }
  }

  async function answered(
    thread: JobThread,
    jobId: string,
    snapshot: JobSnapshot,
    started: number,
  ): Promise<PollResult> {
    // Right after a follow-up the service may still report the previous round's final
    // status before it picks up the new message: not the answer to the follow-up yet.
    const early =
      isFinalStatus(snapshot.status) &&
      thread.followUpAt !== null &&
      now() - thread.followUpAt < deps.followUpGraceMs;
    const final = isFinalStatus(snapshot.status) && !early;
    const changed =
      !early && (snapshot.status !== thread.status || snapshot.prLink !== thread.prLink);
    // A job stays on the first delay while it is fresh: just started, followed up or changed.
    const since = thread.changedAt ?? thread.createdAt;
    const { intervalMs, delayMs } = nextPollDelay(
      thread.pollIntervalMs,
      changed || now() - since < fresh,
      backoff,
      deps.random,
    );
    // A final status is announced even when it is the one we already knew (a job can be
    // final in the create answer itself); the outbox key keeps it to once per round.
    const announcements: Announcement[] = final ? [announce(jobId, thread.round, snapshot)] : [];
    const nextPollAt = final ? null : now() + delayMs;
    const recorded = await record(thread, {
      snapshot: early ? null : snapshot,
      schedule: { nextPollAt, pollIntervalMs: intervalMs },
      announcements,
      failingSince: null,
    });
    if (!recorded) return superseded(thread, jobId);
    const durationMs = Math.round(performance.now() - started);
    if (changed)
      log.info(
        { jobId, threadId: thread.id, from: thread.status, to: snapshot.status, durationMs },
        'poll.changed',
      );
    else
      log.debug(
        { jobId, status: snapshot.status, nextInMs: delayMs, durationMs },
        'poll.unchanged',
      );
    return { outcome: changed ? 'changed' : 'unchanged', show: changed || final, nextPollAt };
  }

  /** The job is gone: say so once and stop asking. */
  async function lost(thread: JobThread, jobId: string): Promise<PollResult> {
    const snapshot: JobSnapshot = { ...snapshotOf(thread, jobId), status: 'lost' };
    const recorded = await record(thread, {
      snapshot,
      schedule: { nextPollAt: null, pollIntervalMs: thread.pollIntervalMs },
      announcements: [
        { key: announcementKey(jobId, thread.round, 'lost'), kind: 'lost', prLink: null },
      ],
    });
    // A follow-up started a new round meanwhile, or another replica took the job over.
    if (!recorded) return superseded(thread, jobId);
    log.warn({ jobId, threadId: thread.id }, 'poll.lost');
    return { outcome: 'lost', show: true, nextPollAt: null };
  }

  /**
   * Transient or configuration trouble: keep the job, ask again later. A rejected key or an
   * answer we cannot read will not fix itself quickly: wait the longest, and once it has
   * lasted `troubleAfterMs`, say in the thread what is wrong (once per streak). A 429 holds
   * the polls of the job's project until its Retry-After; this job goes after it.
   */
  async function failed(thread: JobThread, jobId: string, err: ApiError): Promise<PollResult> {
    // A workspace with no docs connected (distributed mode) is not asked about until it is.
    const lasting =
      err instanceof Unauthorized ||
      err instanceof Forbidden ||
      err instanceof MalformedResponse ||
      err instanceof NotConnected;
    const prev = lasting ? backoff.maxMs : Math.max(thread.pollIntervalMs, backoff.baseMs) * 2;
    const { intervalMs, delayMs } = nextPollDelay(prev, false, backoff, deps.random);
    const wait =
      err instanceof RateLimited
        ? Math.max(delayMs, deps.rateLimited(err, thread) - now())
        : delayMs;
    const since = lasting ? (thread.pollFailingSince ?? now()) : undefined;
    const tell = since !== undefined && now() - since >= deps.troubleAfterMs;
    const nextPollAt = now() + wait;
    await record(thread, {
      snapshot: null,
      schedule: { nextPollAt, pollIntervalMs: intervalMs },
      announcements: tell ? [trouble(jobId, thread.round, since, err, backoff.maxMs)] : [],
      ...(since === undefined ? {} : { failingSince: since }),
    });
    // A 429 is logged once per pause, by the poller.
    if (!(err instanceof RateLimited))
      log[lasting ? 'error' : 'warn'](
        { err, jobId, kind: err.kind, nextInMs: wait },
        'poll.failed',
      );
    return { outcome: 'failed', show: tell, nextPollAt };
  }

  function superseded(thread: JobThread, jobId: string): PollResult {
    log.info({ jobId, threadId: thread.id }, 'poll.superseded');
    return { outcome: 'superseded', show: false, nextPollAt: null };
  }

  /**
   * A job leased while a 429 pauses its project: not polled, but given back due at the end
   * of the pause, its schedule otherwise untouched.
   */
  function putOff(thread: JobThread, until: number): Promise<boolean> {
    return record(thread, {
      snapshot: null,
      schedule: { nextPollAt: until, pollIntervalMs: thread.pollIntervalMs },
      announcements: [],
    });
  }

  return { pollJob, putOff };
}

function announce(jobId: string, round: number, s: JobSnapshot): Announcement {
  const kind = s.status === 'active' || s.status === 'lost' ? 'lost' : s.status;
  return { key: announcementKey(jobId, round, kind), kind, prLink: s.prLink };
}

function snapshotOf(t: JobThread, jobId: string): JobSnapshot {
  return {
    jobId,
    status: 'active',
    model: t.model,
    repository: t.repository,
    ref: t.ref,
    prLink: t.prLink,
  };
}

/** The thread's notice that its job cannot be checked on; one per failing streak. */
function trouble(
  jobId: string,
  round: number,
  since: number,
  err: ApiError,
  retryMs: number,
): Announcement {
  return {
    key: `${announcementKey(jobId, round, 'trouble')}:${since}`,
    kind: 'notice',
    prLink: null,
    detail: `I can't check on this job right now: ${err.message}. I keep trying every ${Math.round(retryMs / 1000)} s and will post here when it moves on.`,
  };
}
