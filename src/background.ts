import { HOUR_MS } from './api/budget.ts';
import type { ApiClient } from './api/client.ts';
import type { BotOptions } from './bot.ts';
import type { Config } from './config.ts';
import type { Scheduler } from './jobs/channel-queues.ts';
import { startLoop } from './jobs/loop.ts';
import { startNotifier } from './jobs/notifier.ts';
import { startPoller } from './jobs/poller.ts';
import type { JobChat, Wake } from './jobs/ports.ts';
import { startRecovery } from './jobs/recovery.ts';
import type { JobService } from './jobs/service.ts';
import type { Logger } from './log.ts';
import type { Metrics } from './metrics.ts';
import type { Store } from './store/types.ts';
import type { Teardown } from './teardown.ts';

/** Processed Slack events are remembered this long; Slack retries within minutes. */
const EVENT_MEMORY_MS = 7 * 24 * HOUR_MS;
const HOUSEKEEPING_MS = 5 * 60_000;
/** How soon the notifier shows a change made by a start or a follow-up. */
const SHOW_WITHIN_MS = 20;

/**
 * The notifier, the poller and housekeeping. Returns what wakes the first two after a
 * change, so that a new job is polled and shown at once.
 */
export function startBackground(deps: {
  config: Config;
  opts: BotOptions;
  log: Logger;
  teardown: Teardown;
  store: Store;
  api: ApiClient;
  chat: JobChat;
  owner: string;
  metrics: Metrics;
  /** The per-channel pacer the notifier shares with job starts' root posts. */
  scheduler?: Scheduler;
}): Wake {
  const { config, opts, log, teardown, store, owner, metrics } = deps;
  // Once the loops below have stopped, the leases left by work they cut short are given
  // back, so that other replicas take it over at once rather than when the leases run out.
  teardown.add('leases', () => store.releaseLeases(owner));
  const notifier = startNotifier({
    store,
    chat: deps.chat,
    log,
    owner,
    leaseMs: config.leaseMs,
    metrics,
    ...(deps.scheduler ? { scheduler: deps.scheduler } : {}),
    ...(opts.channelGapMs === undefined ? {} : { channelGapMs: opts.channelGapMs }),
    ...(opts.updateLimit === undefined ? {} : { updateLimit: opts.updateLimit }),
  });
  teardown.add('notifier', () => notifier.stop());
  const poller = startPoller({
    store,
    api: deps.api,
    log,
    backoff: { baseMs: config.poll.intervalMs, maxMs: config.poll.maxIntervalMs },
    owner,
    leaseMs: config.leaseMs,
    metrics,
    ...(opts.followUpGraceMs === undefined ? {} : { followUpGraceMs: opts.followUpGraceMs }),
    ...(opts.troubleAfterMs === undefined ? {} : { troubleAfterMs: opts.troubleAfterMs }),
    onChange: () => notifier.kick(),
  });
  teardown.add('poller', () => poller.stop());

  // Runs at start and every few minutes after.
  const housekeeping = startLoop({
    name: 'housekeeping',
    log,
    idleMs: HOUSEKEEPING_MS,
    pass: async () => {
      await store
        .pruneEvents(Date.now() - EVENT_MEMORY_MS)
        .catch((err: unknown) => log.error({ err }, 'housekeeping.prune_failed'));
      return null;
    },
  });
  teardown.add('housekeeping', () => housekeeping.stop());
  return (pollAt) => {
    // A burst of starts makes one notifier pass every few milliseconds, not one each.
    notifier.kickAt(Date.now() + SHOW_WITHIN_MS);
    if (pollAt !== undefined) poller.kickAt(pollAt);
  };
}

/** Settles, every LEASE_MS, what a crash of this or another replica cut short. */
export function startRecoveryLoop(deps: {
  config: Config;
  log: Logger;
  teardown: Teardown;
  store: Store;
  chat: JobChat;
  jobs: JobService;
  wake: Wake;
  opts: BotOptions;
}): void {
  const { jobs, opts } = deps;
  const recovery = startRecovery({
    store: deps.store,
    chat: deps.chat,
    deliver: jobs.deliver,
    log: deps.log,
    staleMs: deps.config.leaseMs,
    firstPoll: jobs.firstPoll,
    wake: deps.wake,
    ...(opts.pendingRootMs === undefined ? {} : { pendingRootMs: opts.pendingRootMs }),
  });
  deps.teardown.add('recovery', () => recovery.stop());
}
