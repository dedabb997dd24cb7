import { HOUR_MS } from '../api/budget.ts';
import type { ApiClient } from '../api/client.ts';
import type { Config } from '../config/config.ts';
import type { Scheduler } from '../jobs/channel-queues.ts';
import { startLoop } from '../jobs/loop.ts';
import { startNotifier } from '../jobs/notifier.ts';
import { startPoller } from '../jobs/poller.ts';
import type { JobChat, Wake } from '../jobs/ports.ts';
import { systemClock } from '../jobs/rate-limits.ts';
import { startRecovery } from '../jobs/recovery.ts';
import type { JobService } from '../jobs/service.ts';
import type { Logger } from '../log.ts';
import type { Liveness } from './liveness.ts';
import type { Metrics } from './metrics.ts';
import type { BotOptions } from './options.ts';
import type { Teardown } from './teardown.ts';

/** Processed Slack events are remembered this long; Slack retries within minutes. */
const EVENT_MEMORY_MS = 7 * 24 * HOUR_MS;
const HOUSEKEEPING_MS = 5 * 60_000;
/** The notifier's longest sleep (src/jobs/notifier.ts). */
const NOTIFIER_IDLE_MS = 30_000;
/** How soon the notifier shows a change made by a start or a follow-up. */
const SHOW_WITHIN_MS = 20;

/**
 * The notifier, the poller and housekeeping, each on a store of its own whose calls end
 * within a deadline and whose answers show the loop alive (src/app/liveness.ts). Returns what
 * wakes the first two after a change, so that a new job is polled and shown at once.
 */
export function startBackground(deps: {
  config: Config;
  opts: BotOptions;
  log: Logger;
  teardown: Teardown;
  api: ApiClient;
  chat: JobChat;
  owner: string;
  metrics: Metrics;
  liveness: Liveness;
  /** The database's clock (src/clock.ts). */
  now: () => number;
  /** The per-channel pacer the notifier shares with job starts' root posts. */
  scheduler?: Scheduler;
}): Wake {
  const { config, opts, log, teardown, owner, metrics, liveness, now } = deps;
  const pollerIdleMs = Math.min(config.poll.maxIntervalMs, 60_000);
  const pollerStore = liveness.loopStore('poller', pollerIdleMs);
  // Once the loops below have stopped, the leases left by work they cut short are given
  // back, so that other replicas take it over at once rather than when the leases run out.
  teardown.add('leases', () => pollerStore.releaseLeases(owner));
  const notifier = startNotifier({
    store: liveness.loopStore('notifier', NOTIFIER_IDLE_MS),
    chat: deps.chat,
    log,
    owner,
    leaseMs: config.leaseMs,
    metrics,
    clock: { ...systemClock, now },
    // Each workspace its share of the queues (distributed mode).
    perWorkspace: config.distribution !== undefined,
    ...(deps.scheduler ? { scheduler: deps.scheduler } : {}),
    ...(opts.channelGapMs === undefined ? {} : { channelGapMs: opts.channelGapMs }),
    ...(opts.updateLimit === undefined ? {} : { updateLimit: opts.updateLimit }),
  });
  teardown.add('notifier', () => notifier.stop());
  const poller = startPoller({
    store: pollerStore,
    api: deps.api,
    log,
    backoff: { baseMs: config.poll.intervalMs, maxMs: config.poll.maxIntervalMs },
    owner,
    leaseMs: config.leaseMs,
    concurrency: config.poll.concurrencyMax,
    metrics,
    now,
    ...(opts.followUpGraceMs === undefined ? {} : { followUpGraceMs: opts.followUpGraceMs }),
    ...(opts.troubleAfterMs === undefined ? {} : { troubleAfterMs: opts.troubleAfterMs }),
    onChange: () => notifier.changed(),
  });
  teardown.add('poller', () => poller.stop());

  // Runs at start and every few minutes after.
  const store = liveness.loopStore('housekeeping', HOUSEKEEPING_MS);
  const housekeeping = startLoop({
    name: 'housekeeping',
    log,
    idleMs: HOUSEKEEPING_MS,
    pass: async () => {
      await store
        .pruneEvents(now() - EVENT_MEMORY_MS)
        .catch((err: unknown) => log.error({ err }, 'housekeeping.prune_failed'));
      return null;
    },
  });
  teardown.add('housekeeping', () => housekeeping.stop());
  return (pollAt) => {
    // A burst of starts makes one notifier pass every few milliseconds, not one each.
    notifier.kickAt(now() + SHOW_WITHIN_MS);
    if (pollAt !== undefined) poller.kickAt(pollAt);
  };
}

/** Settles, every LEASE_MS, what a crash of this or another replica cut short. */
export function startRecoveryLoop(deps: {
  config: Config;
  log: Logger;
  teardown: Teardown;
  chat: JobChat;
  jobs: JobService;
  wake: Wake;
  opts: BotOptions;
  /** Names this process in the claims it takes on orphaned commands. */
  owner: string;
  /** Answers a person through a command's response_url. */
  answer: (responseUrl: string, text: string) => Promise<void>;
  now: () => number;
  liveness: Liveness;
}): void {
  const { jobs, opts } = deps;
  const recovery = startRecovery({
    store: deps.liveness.loopStore('recovery', deps.config.leaseMs),
    chat: deps.chat,
    deliver: jobs.deliver,
    log: deps.log,
    staleMs: deps.config.leaseMs,
    firstPoll: jobs.firstPoll,
    wake: deps.wake,
    commands: {
      owner: deps.owner,
      leaseMs: deps.config.leaseMs,
      startJob: jobs.startJob,
      answer: deps.answer,
    },
    now: deps.now,
    ...(opts.pendingRootMs === undefined ? {} : { pendingRootMs: opts.pendingRootMs }),
  });
  deps.teardown.add('recovery', () => recovery.stop());
}
