import type { ApiClient } from '../api/client.ts';
import { ApiError, Forbidden, NotFound, RateLimited, Unauthorized } from '../api/errors.ts';
import { isFinalStatus } from '../api/schemas.ts';
import type { Logger } from '../log.ts';
import type { Announcement, JobSnapshot, JobThread, Store } from '../store/types.ts';
import { type BackoffOptions, nextPollDelay } from './backoff.ts';
import { type Loop, startLoop } from './loop.ts';
import { toSnapshot } from './service.ts';

export interface PollerDeps {
  store: Store;
  api: Pick<ApiClient, 'getJob'>;
  log: Logger;
  backoff: BackoffOptions;
  /** Jobs polled at the same time, at most. */
  concurrency?: number;
  /**
   * How long after a follow-up a final status that may predate it is not believed (until
   * the job is seen active again). Default: three first-poll delays, at least 30 s.
   */
  followUpGraceMs?: number;
  /** Called after a pass recorded something to announce or show. */
  onChange: () => void;
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
  const { store, api, backoff } = deps;
  const log = deps.log.child({ component: 'poller' });
  const now = deps.now ?? Date.now;
  const concurrency = deps.concurrency ?? 4;
  const followUpGraceMs = deps.followUpGraceMs ?? Math.max(3 * backoff.baseMs, 30_000);
  // Aborted on stop, so that shutdown does not wait out a slow API and its retries.
  const stopping = new AbortController();

  async function pollOne(thread: JobThread): Promise<boolean> {
    const jobId = thread.jobId;
    if (!jobId) return false;
    const started = performance.now();
    try {
      const snapshot = toSnapshot(await api.getJob(jobId, { signal: stopping.signal }));
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
      const recorded = await store.recordPoll(
        thread.id,
        thread.round,
        early ? null : snapshot,
        { nextPollAt: final ? null : now() + delayMs, pollIntervalMs: intervalMs },
        announcements,
        now(),
      );
      if (!recorded) {
        log.info({ jobId, threadId: thread.id }, 'poll.superseded_by_follow_up');
        return false;
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
      return changed;
    } catch (err) {
      if (stopping.signal.aborted) return false; // left as it was: polled again after restart
      if (err instanceof NotFound) {
        // The job is gone: say so once and stop asking.
        const lost: JobSnapshot = { ...snapshotOf(thread, jobId), status: 'lost' };
        const recorded = await store.recordPoll(
          thread.id,
          thread.round,
          lost,
          { nextPollAt: null, pollIntervalMs: thread.pollIntervalMs },
          [{ key: announcementKey(jobId, thread.round, 'lost'), kind: 'lost', prLink: null }],
          now(),
        );
        if (!recorded) return false; // a follow-up started a new round meanwhile
        log.warn({ jobId, threadId: thread.id }, 'poll.lost');
        return true;
      }
      if (!(err instanceof ApiError)) throw err;
      // Transient or configuration trouble: keep the job, ask again later. Auth problems
      // will not fix themselves quickly, so wait the longest.
      const slow = err instanceof Unauthorized || err instanceof Forbidden;
      const prev = slow ? backoff.maxMs : Math.max(thread.pollIntervalMs, backoff.baseMs) * 2;
      const { intervalMs, delayMs } = nextPollDelay(prev, false, backoff, deps.random);
      const wait = err instanceof RateLimited ? Math.max(delayMs, err.retryAfterMs) : delayMs;
      await store.recordPoll(
        thread.id,
        thread.round,
        null,
        { nextPollAt: now() + wait, pollIntervalMs: intervalMs },
        [],
        now(),
      );
      log[slow ? 'error' : 'warn']({ err, jobId, kind: err.kind, nextInMs: wait }, 'poll.failed');
      return false;
    }
  }

  async function pass(): Promise<number | null> {
    const due = await store.dueJobs(now(), concurrency * 4);
    let changed = false;
    let crashed = false;
    for (let i = 0; i < due.length; i += concurrency) {
      const batch = due.slice(i, i + concurrency);
      const results = await Promise.allSettled(batch.map(pollOne));
      for (const [j, r] of results.entries()) {
        if (r.status === 'fulfilled') changed ||= r.value;
        else {
          crashed = true;
          log.error({ err: r.reason, threadId: batch[j]?.id }, 'poll.crashed');
        }
      }
    }
    if (changed) deps.onChange();
    // A poll whose outcome could not be recorded (the database failing) is still due:
    // pause before asking the API again rather than spinning.
    if (crashed) return CRASH_PAUSE_MS;
    if (due.length === concurrency * 4) return 0; // more are due: go on at once
    const next = await store.nextDueAt();
    return next === null ? null : Math.max(0, next - now());
  }

  const loop = startLoop({ name: 'poller', log, idleMs: Math.min(backoff.maxMs, 60_000), pass });
  return {
    kick: loop.kick,
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
