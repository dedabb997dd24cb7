import type { ApiClient } from '../api/client.ts';
import type { RateLimited } from '../api/errors.ts';
import type { Logger } from '../log.ts';
import type { JobThread, Store } from '../store/types.ts';
import type { BackoffOptions } from './backoff.ts';
import { type Loop, startLoop } from './loop.ts';
import { createPollConcurrency } from './poll-concurrency.ts';
import { createJobPoll } from './poll-job.ts';
import { createPollPauses, projectOf } from './poll-pauses.ts';
import { createPollWriter } from './poll-writer.ts';
import { type JobMetrics, noJobMetrics } from './ports.ts';

export { announcementKey } from './poll-job.ts';

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
  /**
   * Jobs polled at the same time, at most (`POLL_CONCURRENCY_MAX`, default 128). Within it
   * the width follows the API's latency and answers: see poll-concurrency.ts.
   */
  concurrency?: number;
  /**
   * How long one poll's GET may take before its slot goes to the next job (one attempt, no
   * client-side retries: the next poll is the retry). Default: the first poll delay, at
   * least 1 s; never past the poll's deadline inside its lease.
   */
  requestTimeoutMs?: number;
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
  /** Called after a poll recorded something to announce or show. */
  onChange: () => void;
  metrics?: JobMetrics;
  now?: () => number;
  random?: () => number;
}

const CRASH_PAUSE_MS = 1_000;
const DEFAULT_CONCURRENCY = 128;
/** How long a poll's outcome may wait for others to share its transaction. */
const WRITE_WAIT_MS = 5;
/** A longer Retry-After is taken as this: one odd header must not stop polling for hours. */
const MAX_PAUSE_MS = 15 * 60_000;
/**
 * Least time between two claims when nothing is pressing: jobs falling due within it are
 * claimed together rather than one query each (a twentieth of the first delay, 50 ms at most).
 */
const MAX_PASS_GAP_MS = 50;

export interface Poller extends Loop {
  /** How many polls the pool keeps in flight now, and the GET latency it sees. */
  pool(): { width: number; latencyMs: number };
}

/**
 * Watches every unfinished job from one loop feeding a pool of polls: as soon as a poll
 * ends, the next due job is claimed (leased) and polled, so one slow job holds up one slot,
 * not the others. The pool is as wide as the polls due and the API's latency need, up to
 * `concurrency`, and narrower when the API answers 429 or slows down. Outcomes are recorded
 * in small batches before anything is said in Slack; the notifier announces from the
 * outbox. A 429 pauses the polls of its project until its Retry-After (the service counts
 * its limits per project): other projects, other workspaces', keep being polled.
 */
export function startPoller(deps: PollerDeps): Poller {
  const { store, backoff, owner } = deps;
  const log = deps.log.child({ component: 'poller' });
  const now = deps.now ?? Date.now;
  const concurrency = Math.max(1, deps.concurrency ?? DEFAULT_CONCURRENCY);
  const pool = createPollConcurrency({
    max: concurrency,
    // Behind by a tenth of the first delay (half a second at most): young jobs fall late.
    lagToleranceMs: Math.min(500, backoff.baseMs / 10),
    now,
  });
  const metrics = deps.metrics ?? noJobMetrics;
  // Aborted on stop, so that shutdown does not wait out a slow API.
  const stopping = new AbortController();
  /** A poll (its record included) ends well inside its lease, counted from the claim. */
  const deadlineMs = Math.floor(deps.leaseMs * 0.8);
  const writer = createPollWriter({ store, maxWaitMs: WRITE_WAIT_MS, maxBatch: concurrency });
  /** Jobs claimed and not yet done with: polling, or waiting for their outcome's write. */
  const inHand = new Set<Promise<void>>();
  let waitingOnWriter = 0;
  const pauses = createPollPauses(now);
  let crashedUntil = 0;
  /** The last claim filled every free slot: more may be due, so polls that end kick. */
  let backlog = false;
  const passGapMs = Math.min(MAX_PASS_GAP_MS, Math.floor(backoff.baseMs / 20));
  /** Under a backlog, slots are refilled a few at a time, not one claim per poll that ends. */
  const refill = () => Math.max(1, Math.floor(pool.width() / 4));
  const alarm = createAlarm(() => loop.kick(), now);

  function rateLimited(err: RateLimited, thread: JobThread): number {
    const projectId = projectOf(thread);
    const { until, began } = pauses.pause(projectId, Math.min(err.retryAfterMs, MAX_PAUSE_MS));
    if (began) {
      // A new pause halves the pool (it comes back by a tenth a second); the polls that
      // meet the same 429 do not cut it again.
      pool.rateLimited();
      const width = pool.width();
      const ids = { jobId: thread.jobId, projectId: thread.projectId };
      log.warn({ ...ids, retryAfterMs: err.retryAfterMs, width }, 'poll.rate_limited');
      metrics.pollsPaused(until - now());
    }
    return until;
  }

  const { pollJob, putOff } = createJobPoll({
    api: deps.api,
    log,
    backoff,
    owner,
    followUpGraceMs: deps.followUpGraceMs ?? Math.max(3 * backoff.baseMs, 30_000),
    troubleAfterMs: deps.troubleAfterMs ?? 10 * 60_000,
    requestTimeoutMs: Math.min(
      deadlineMs,
      deps.requestTimeoutMs ?? Math.max(1_000, backoff.baseMs),
    ),
    record: (p) => {
      waitingOnWriter++;
      const written = writer.record(p).finally(() => {
        waitingOnWriter--;
      });
      // Every job in hand is waiting on the writer: nothing more will join this batch.
      if (waitingOnWriter >= inHand.size) writer.flush();
      return written;
    },
    stopping: stopping.signal,
    rateLimited,
    timed: (ms) => pool.answered(ms),
    now,
    random: deps.random,
  });

  /** Polls a claimed job in a slot of its own. */
  function dispatch(thread: JobThread, claimedAt: number): void {
    const lagMs = Math.max(0, now() - (thread.nextPollAt ?? now()));
    pool.claimed(lagMs);
    const work = (async () => {
      try {
        // Its project was told to wait (a 429): given back, due when the wait ends.
        const paused = pauses.until(projectOf(thread));
        if (paused > now()) {
          await putOff(thread, paused);
          return;
        }
        const result = await pollJob(thread, claimedAt + deadlineMs - now());
        if (!result) return;
        metrics.poll(result.outcome, lagMs);
        if (result.nextPollAt !== null) alarm.wakeBy(result.nextPollAt);
        if (result.show) deps.onChange();
      } catch (err) {
        // The outcome could not be recorded (the database failing): the job stays leased
        // until its lease ends. Pause before asking the API again rather than spinning.
        crashedUntil = now() + CRASH_PAUSE_MS;
        log.error({ err, threadId: thread.id }, 'poll.crashed');
      }
    })().finally(() => {
      inHand.delete(work);
      if (backlog && pool.width() - inHand.size >= refill()) loop.kick();
    });
    inHand.add(work);
  }

  let cap = concurrency;
  /** Says when the API's side (a 429, a slowdown) narrowed the pool; once per cut. */
  function watchCap(): void {
    const state = pool.state();
    if (state.cap < cap)
      log.warn(
        {
          width: state.width,
          cap: state.cap,
          latencyMs: Math.round(state.latencyMs),
          baselineMs: Math.round(state.baselineMs),
        },
        'poll.narrowed',
      );
    cap = state.cap;
  }

  async function pass(): Promise<number | null> {
    alarm.planning();
    watchCap();
    const hold = crashedUntil - now();
    if (hold > 0) return alarm.planned(hold);
    const free = pool.width() - inHand.size;
    backlog = free <= 0;
    if (backlog) {
      pool.full();
      return alarm.planned(null);
    }
    // Claim only what is polled now: a job leased and left waiting could outlive its lease.
    const claimedAt = now();
    const batch = await store.claimDueJobs(claimedAt, free, {
      owner,
      until: claimedAt + deps.leaseMs,
    });
    for (const thread of batch) dispatch(thread, claimedAt);
    backlog = batch.length === free;
    if (backlog) {
      pool.full();
      return alarm.planned(null);
    }
    const next = await store.nextDueAt();
    return alarm.planned(next === null ? null : Math.max(passGapMs, next - now()));
  }

  const idleMs = Math.min(backoff.maxMs, 60_000);
  const loop = startLoop({ name: 'poller', log, idleMs, pass, now });
  return {
    kick: loop.kick,
    kickAt: loop.kickAt,
    pool: () => ({ width: pool.width(), latencyMs: pool.state().latencyMs }),
    async stop() {
      stopping.abort(new Error('poller stopping'));
      await loop.stop();
      alarm.clear();
      // Polls that got their answer before the stop still record it.
      await Promise.allSettled([...inHand]);
      await writer.idle();
    },
  };
}

/**
 * Wakes the loop before its planned time when a poll that ended asks to be polled again
 * sooner than that (the loop planned its sleep while the poll was in flight).
 */
function createAlarm(kick: () => void, now: () => number) {
  let plannedAt = Infinity;
  let at = Infinity;
  let timer: NodeJS.Timeout | undefined;
  const clear = () => {
    clearTimeout(timer);
    timer = undefined;
    at = Infinity;
  };
  return {
    clear,
    /** A pass runs: whatever ends meanwhile may need an earlier wake than it will plan. */
    planning() {
      clear();
      plannedAt = Infinity;
    },
    /** The pass's answer: the loop sleeps this long (null: until kicked, or idle). */
    planned(delayMs: number | null): number | null {
      plannedAt = Math.min(at, delayMs === null ? Infinity : now() + delayMs);
      return delayMs;
    },
    wakeBy(t: number) {
      if (t >= plannedAt || t >= at) return;
      clearTimeout(timer);
      at = t;
      timer = setTimeout(kick, Math.max(0, t - now()));
    },
  };
}
