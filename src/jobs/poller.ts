import type { ApiClient } from '../api/client.ts';
import {
  ApiError,
  Forbidden,
  MalformedResponse,
  NotFound,
  RateLimited,
  Unauthorized,
} from '../api/errors.ts';
import { isFinalStatus } from '../api/schemas.ts';
import type { Logger } from '../log.ts';
import type { Announcement, JobSnapshot, JobThread, PollRecord, Store } from '../store/types.ts';
import { type BackoffOptions, nextPollDelay } from './backoff.ts';
import { withDeadline } from './deadline.ts';
import { type Loop, startLoop } from './loop.ts';
import { type JobMetrics, noJobMetrics, type PollOutcome } from './ports.ts';
import { toSnapshot } from './snapshot.ts';

export interface PollerDeps {
  store: Store;
  api: Pick<ApiClient, 'getJob'>;
  log: Logger;
  backoff: BackoffOptions;
  /** Names this process in the leases it takes on jobs. */
  owner: string;
  /**
   * How long a claim on a job's poll lasts. A poll is cut off before its lease ends, so
   * no other replica polls the job meanwhile; a dead replica's jobs are taken over after.
   */
  leaseMs: number;
  /** Jobs polled at the same time, at most. */
  concurrency?: number;
  /**
   * How long after a follow-up a final status that may predate it is not believed (until
   * the job is seen active again). Default: three first-poll delays, at least 30 s.
   */
  followUpGraceMs?: number;
  /**
   * How long polls may keep failing for a reason that will not fix itself (a rejected key,
   * an answer we cannot read) before the thread is told. Default: 10 minutes.
   */
  troubleAfterMs?: number;
  /** Called after a pass recorded something to announce or show. */
  onChange: () => void;
  metrics?: JobMetrics;
  now?: () => number;
  random?: () => number;
}

const CRASH_PAUSE_MS = 1_000;

export function announcementKey(jobId: string, round: number, kind: string): string {
  return `${jobId}:${round}:${kind}`;
}

/**
 * Watches every unfinished job from one loop. Each poll's outcome is recorded (state,
 * next poll, announcements into the outbox) in one transaction before anything is said in
 * Slack; the notifier announces from the outbox.
 */
export function startPoller(deps: PollerDeps): Loop {
  const { store, api, backoff, owner } = deps;
  const log = deps.log.child({ component: 'poller' });
  const now = deps.now ?? Date.now;
  const concurrency = deps.concurrency ?? 4;
  const followUpGraceMs = deps.followUpGraceMs ?? Math.max(3 * backoff.baseMs, 30_000);
  const troubleAfterMs = deps.troubleAfterMs ?? 10 * 60_000;
  const metrics = deps.metrics ?? noJobMetrics;
  // Aborted on stop, so that shutdown does not wait out a slow API and its retries.
  const stopping = new AbortController();
  /** A poll (its retries included) ends well inside its lease. */
  const deadlineMs = Math.floor(deps.leaseMs * 0.8);
  const record = (thread: JobThread, p: Omit<PollRecord, 'threadId' | 'round' | 'now' | 'owner'>) =>
    store.recordPoll({ threadId: thread.id, round: thread.round, now: now(), owner, ...p });

  /** Polls one job; true when something changed that the notifier should show. */
  async function pollOne(thread: JobThread): Promise<boolean> {
    const jobId = thread.jobId;
    if (!jobId) return false;
    const lagMs = Math.max(0, now() - (thread.nextPollAt ?? now()));
    const result = await poll(thread, jobId);
    if (!result) return false;
    metrics.poll(result.outcome, lagMs);
    return result.show;
  }

  /**
   * What one poll came to, and whether it left something to show or announce; undefined
   * when a stop cut it short (it is polled again after the restart).
   */
  async function poll(
    thread: JobThread,
    jobId: string,
  ): Promise<{ outcome: PollOutcome; show: boolean } | undefined> {
    const started = performance.now();
    try {
      const job = await withDeadline(
        'job.get',
        deadlineMs,
        (signal) => api.getJob(jobId, { signal }),
        stopping.signal,
      );
      const snapshot = toSnapshot(job);
      // Right after a follow-up the service may still report the previous round's final
      // status before it picks up the new message: not the answer to the follow-up yet.
      const early =
        isFinalStatus(snapshot.status) &&
        thread.followUpAt !== null &&
        now() - thread.followUpAt < followUpGraceMs;
      const final = isFinalStatus(snapshot.status) && !early;
      const changed =
        !early && (snapshot.status !== thread.status || snapshot.prLink !== thread.prLink);
      const { intervalMs, delayMs } = nextPollDelay(
        thread.pollIntervalMs,
        changed,
        backoff,
        deps.random,
      );
      // A final status is announced even when it is the one we already knew (a job can be
      // final in the create answer itself); the outbox key keeps it to once per round.
      const announcements: Announcement[] = final ? [announce(jobId, thread.round, snapshot)] : [];
      const recorded = await record(thread, {
        snapshot: early ? null : snapshot,
        schedule: { nextPollAt: final ? null : now() + delayMs, pollIntervalMs: intervalMs },
        announcements,
        failingSince: null,
      });
      if (!recorded) {
        log.info({ jobId, threadId: thread.id }, 'poll.superseded');
        return { outcome: 'superseded', show: false };
      }
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
      return { outcome: changed ? 'changed' : 'unchanged', show: changed || final };
    } catch (err) {
      if (stopping.signal.aborted) return undefined;
      if (err instanceof NotFound) {
        // The job is gone: say so once and stop asking.
        const lost: JobSnapshot = { ...snapshotOf(thread, jobId), status: 'lost' };
        const recorded = await record(thread, {
          snapshot: lost,
          schedule: { nextPollAt: null, pollIntervalMs: thread.pollIntervalMs },
          announcements: [
            { key: announcementKey(jobId, thread.round, 'lost'), kind: 'lost', prLink: null },
          ],
        });
        // A follow-up started a new round meanwhile, or another replica took the job over.
        if (!recorded) return { outcome: 'superseded', show: false };
        log.warn({ jobId, threadId: thread.id }, 'poll.lost');
        return { outcome: 'lost', show: true };
      }
      if (!(err instanceof ApiError)) throw err;
      return { outcome: 'failed', show: await failed(thread, jobId, err) };
    }
  }

  /**
   * Transient or configuration trouble: keep the job, ask again later. A rejected key or an
   * answer we cannot read will not fix itself quickly: wait the longest, and once it has
   * lasted `troubleAfterMs`, say in the thread what is wrong (once per streak).
   */
  async function failed(thread: JobThread, jobId: string, err: ApiError): Promise<boolean> {
    const lasting =
      err instanceof Unauthorized || err instanceof Forbidden || err instanceof MalformedResponse;
    const prev = lasting ? backoff.maxMs : Math.max(thread.pollIntervalMs, backoff.baseMs) * 2;
    const { intervalMs, delayMs } = nextPollDelay(prev, false, backoff, deps.random);
    const wait = err instanceof RateLimited ? Math.max(delayMs, err.retryAfterMs) : delayMs;
    const since = lasting ? (thread.pollFailingSince ?? now()) : undefined;
    const tell = since !== undefined && now() - since >= troubleAfterMs;
    await record(thread, {
      snapshot: null,
      schedule: { nextPollAt: now() + wait, pollIntervalMs: intervalMs },
      announcements: tell ? [trouble(jobId, thread.round, since, err, backoff.maxMs)] : [],
      ...(since === undefined ? {} : { failingSince: since }),
    });
    log[lasting ? 'error' : 'warn']({ err, jobId, kind: err.kind, nextInMs: wait }, 'poll.failed');
    return tell;
  }

  async function pass(): Promise<number | null> {
    // Claim only what is polled now: a job leased and left waiting behind others could
    // outlive its lease and be polled by a second replica.
    const batch = await store.claimDueJobs(now(), concurrency, {
      owner,
      until: now() + deps.leaseMs,
    });
    let changed = false;
    let crashed = false;
    const results = await Promise.allSettled(batch.map(pollOne));
    for (const [j, r] of results.entries()) {
      if (r.status === 'fulfilled') changed ||= r.value;
      else {
        crashed = true;
        log.error({ err: r.reason, threadId: batch[j]?.id }, 'poll.crashed');
      }
    }
    if (changed) deps.onChange();
    // A poll whose outcome could not be recorded (the database failing) is still due:
    // pause before asking the API again rather than spinning.
    if (crashed) return CRASH_PAUSE_MS;
    if (batch.length === concurrency) return 0; // more may be due: go on at once
    const next = await store.nextDueAt();
    return next === null ? null : Math.max(0, next - now());
  }

  const loop = startLoop({ name: 'poller', log, idleMs: Math.min(backoff.maxMs, 60_000), pass });
  return {
    kick: loop.kick,
    kickAt: loop.kickAt,
    async stop() {
      stopping.abort(new Error('poller stopping'));
      await loop.stop();
    },
  };
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
