import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { DestinationStream } from 'pino';
import { HOUR_MS, slidingWindowBudget } from './api/budget.ts';
import { ApiClient, type RetryOptions } from './api/client.ts';
import { startBackground, startRecoveryLoop } from './background.ts';
import type { Config } from './config.ts';
import { createInflight } from './inflight.ts';
import type { BucketLimit } from './jobs/rate-limits.ts';
import { createJobService } from './jobs/service.ts';
import { createJobStatus } from './jobs/status.ts';
import { createLogger, type Logger } from './log.ts';
import { createMetrics, type Metrics } from './metrics.ts';
import { probeEndpoints } from './probes.ts';
import { type DigestDeps, startDigest } from './reports/digest.ts';
import { createReportService } from './reports/service.ts';
import { createSlackApp, type SlackApp } from './slack/app.ts';
import { createSlackJobChat } from './slack/chat.ts';
import { registerListeners } from './slack/listeners/index.ts';
import { recordThreadReplies } from './slack/listeners/thread-replies.ts';
import { createSlackReportPoster } from './slack/report-poster.ts';
import { openStore } from './store/open.ts';
import type { Store } from './store/types.ts';
import { createTeardown, drainInflight, settleAbandoned, type Teardown } from './teardown.ts';
import { createWorkQueue } from './work-queue.ts';

/** Documented budgets of the service: per project per hour (agent), per organisation per hour (analytics). */
export const AGENT_USES_PER_HOUR = 100;
export const ANALYTICS_REQUESTS_PER_HOUR = 100;

export interface BotOptions {
  logDestination?: DestinationStream;
  /** Tests shorten these; production uses the defaults. */
  apiRetry?: Partial<RetryOptions>;
  apiTimeoutMs?: number;
  channelGapMs?: number;
  updateLimit?: BucketLimit;
  followUpGraceMs?: number;
  troubleAfterMs?: number;
  pendingRootMs?: number;
  digest?: { staleClaimMs?: number; retryMs?: number };
  /** The work queue after acks (tests fill it to see the busy answer). */
  work?: { concurrency: number; capacity: number };
  /** Tests keep a handle on the store this way (to take the database away from a running bot). */
  openStore?: (databaseUrl: string, log: Logger) => Promise<Store>;
}

export interface Bot {
  log: Logger;
  /**
   * Stops taking commands and events, waits for those in flight (SHUTDOWN_TIMEOUT_MS at
   * most), cuts short what still waits on the API, stops the loops, closes the database.
   */
  stop(): Promise<void>;
}

/**
 * The composition root: builds every part from the config, starts them, and tears them
 * down in reverse order. No part reaches for another except through what is passed here.
 */
export async function startBot(config: Config, opts: BotOptions = {}): Promise<Bot> {
  const log = createLogger({
    level: config.logLevel,
    secrets: [
      config.slack.botToken,
      config.slack.appToken,
      config.slack.signingSecret,
      config.api.key,
      databasePassword(config.databaseUrl),
    ],
    ...(opts.logDestination ? { destination: opts.logDestination } : {}),
  });
  const teardown = createTeardown(log);
  try {
    await assemble(config, opts, log, teardown);
  } catch (err) {
    await teardown.run();
    throw err;
  }
  return { log, stop: teardown.run };
}

/**
 * Work after an ack: a few at once (each mostly waits on Slack and the API; one at a time
 * while requests keep arriving), and a backlog large enough for any burst of commands.
 */
const FOLLOW_ON_WORK = { concurrency: 4, capacity: 5_000 };

/** Builds and starts every part; each registers its stop as soon as it exists. */
async function assemble(config: Config, opts: BotOptions, log: Logger, teardown: Teardown) {
  // Names this process in every lease and claim it takes in the shared database.
  const owner = `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
  const store = await (opts.openStore ?? openStore)(
    config.databaseUrl,
    log.child({ component: 'store' }),
  );
  teardown.add('store', () => store.close());

  const budgets = createBudgets(config, store);
  const metrics = createMetrics({ outboxDepth: () => store.outboxDepth(), budgets, log });
  const inflight = createInflight();
  let accepting = true;
  const slack = createSlack({ config, log, store, metrics, accepting: () => accepting });
  // Closed late, so that the probes answer (not ready) while everything else stops.
  teardown.add('slack', () => slack.stop());

  const api = new ApiClient({
    ...apiSettings(config, opts),
    log: log.child({ component: 'api' }),
    budgets,
    metrics,
  });
  // After the loops (the poller cuts its own polls short and must see that, not a failure);
  // what is still waiting on the API then is work the drain gave up on.
  teardown.add('api', async () => {
    api.stop();
    await settleAbandoned(inflight, log);
  });

  const chat = createSlackJobChat(slack.app.client, log, metrics);
  const wake = startBackground({ config, opts, log, teardown, store, api, chat, owner, metrics });
  const jobs = createJobService({
    store,
    api,
    chat,
    log,
    poll: { intervalMs: config.poll.intervalMs },
    leaseMs: config.leaseMs,
    wake,
    metrics,
    botName: () => slack.identity()?.name,
  });
  startRecoveryLoop({ config, log, teardown, store, chat, jobs, wake, opts });
  const reports = createReportService({
    api,
    store,
    log,
    maxRequests: config.visitors.maxRequests,
  });
  const poster = createSlackReportPoster(
    slack.app.client,
    log.child({ component: 'report-poster' }),
  );
  const timeZone = config.digest.timeZone;
  const work = createWorkQueue({ ...(opts.work ?? FOLLOW_ON_WORK), inflight, log });
  const jobStatus = createJobStatus({ store, budget: budgets.agent });
  registerListeners(slack.app, {
    jobs,
    jobStatus,
    store,
    chat,
    botName: () => slack.identity()?.name,
    reports,
    poster,
    log,
    inflight,
    work,
    timeZone,
  });
  slack.beforeAck(recordThreadReplies({ jobs, botUserId: () => slack.identity()?.userId }));

  await slack.start();
  const digestChannel = config.digest.channel;
  if (digestChannel) {
    const deps = { store, reports, poster, log, owner };
    teardown.add('digest', startWeeklyDigest(digestChannel, config, opts, deps));
  }
  // A shutdown stops taking work first, then waits for the work already taken.
  teardown.add('drain', () => drainInflight(inflight, config.shutdownTimeoutMs, log));
  teardown.add('intake', async () => {
    accepting = false;
    await slack.stopIntake();
  });
  log.info({ mode: config.slack.mode, port: config.port }, 'bot.started');
}

/** The weekly digest in DIGEST_CHANNEL; returns its stop. */
function startWeeklyDigest(
  channelId: string,
  config: Config,
  opts: BotOptions,
  deps: Pick<DigestDeps, 'store' | 'reports' | 'poster' | 'log' | 'owner'>,
): () => void {
  const digest = startDigest({
    ...deps,
    channelId,
    cron: config.digest.cron,
    timeZone: config.digest.timeZone,
    ...opts.digest,
  });
  return () => digest.stop();
}

/** The Bolt app, serving the probes and the metrics on PORT beside Slack's own traffic. */
function createSlack(deps: {
  config: Config;
  log: Logger;
  store: Store;
  metrics: Metrics;
  accepting: () => boolean;
}): SlackApp {
  const { config, log, store, metrics } = deps;
  const slack: SlackApp = createSlackApp({
    config,
    log,
    endpoints: [
      ...probeEndpoints({
        mode: config.slack.mode,
        log: log.child({ component: 'probes' }),
        checks: {
          database: () => store.ping(),
          slackConnected: () => slack.connected(),
          accepting: deps.accepting,
        },
      }),
      { path: '/metrics', answer: async () => ({ status: 200, ...(await metrics.scrape()) }) },
    ],
  });
  return slack;
}

function apiSettings(config: Config, opts: BotOptions) {
  return {
    baseUrl: config.api.baseUrl,
    apiKey: config.api.key,
    projectId: config.api.projectId,
    ...(opts.apiRetry ? { retry: opts.apiRetry } : {}),
    ...(opts.apiTimeoutMs ? { timeoutMs: opts.apiTimeoutMs } : {}),
  };
}

/** The documented hourly budgets, counted in the store so that replicas share them. */
function createBudgets(config: Config, store: Store) {
  return {
    agent: slidingWindowBudget(store, {
      key: `agent:${config.api.projectId}`,
      limit: AGENT_USES_PER_HOUR,
      windowMs: HOUR_MS,
      description: "This project's agent budget (100 jobs and messages per hour)",
    }),
    analytics: slidingWindowBudget(store, {
      key: 'analytics',
      limit: ANALYTICS_REQUESTS_PER_HOUR,
      windowMs: HOUR_MS,
      description: 'The analytics budget (100 requests per hour)',
    }),
  };
}

/** The password in a postgres:// URL is a secret like the tokens: never logged. */
function databasePassword(url: string): string | undefined {
  if (!/^postgres(ql)?:/.test(url)) return undefined;
  try {
    return decodeURIComponent(new URL(url).password) || undefined;
  } catch {
    return undefined;
  }
}
