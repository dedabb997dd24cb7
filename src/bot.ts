import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { DestinationStream } from 'pino';
import { HOUR_MS, slidingWindowBudget } from './api/budget.ts';
import { ApiClient, type RetryOptions } from './api/client.ts';
import type { Config } from './config.ts';
import { startLoop } from './jobs/loop.ts';
import { startNotifier } from './jobs/notifier.ts';
import { startPoller } from './jobs/poller.ts';
import { startRecovery } from './jobs/recovery.ts';
import { createJobService } from './jobs/service.ts';
import { createLogger, type Logger } from './log.ts';
import { startDigest } from './reports/digest.ts';
import { createReportService } from './reports/service.ts';
import { createSlackApp } from './slack/app.ts';
import { createSlackJobChat } from './slack/chat.ts';
import { registerListeners } from './slack/listeners/index.ts';
import { createSlackReportPoster } from './slack/report-poster.ts';
import { openStore } from './store/open.ts';

/** Documented budgets of the service: per project per hour (agent), per organisation per hour (analytics). */
export const AGENT_USES_PER_HOUR = 100;
export const ANALYTICS_REQUESTS_PER_HOUR = 100;
/** Processed Slack events are remembered this long; Slack retries within minutes. */
const EVENT_MEMORY_MS = 7 * 24 * HOUR_MS;
const HOUSEKEEPING_MS = 5 * 60_000;

export interface BotOptions {
  logDestination?: DestinationStream;
  /** Tests shorten these; production uses the defaults. */
  apiRetry?: Partial<RetryOptions>;
  apiTimeoutMs?: number;
  channelGapMs?: number;
  followUpGraceMs?: number;
  troubleAfterMs?: number;
  digest?: { staleClaimMs?: number; retryMs?: number };
}

export interface Bot {
  log: Logger;
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
  const stack: { name: string; stop: () => Promise<void> }[] = [];
  const stopAll = async () => {
    for (const part of stack.reverse()) {
      try {
        await part.stop();
      } catch (err) {
        log.error({ err, part: part.name }, 'bot.stop_failed');
      }
    }
    log.info('bot.stopped');
    log.flush();
  };

  // Names this process in every lease and claim it takes in the shared database.
  const owner = `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
  try {
    const store = await openStore(config.databaseUrl, log.child({ component: 'store' }));
    stack.push({ name: 'store', stop: () => store.close() });

    const api = new ApiClient({
      baseUrl: config.api.baseUrl,
      apiKey: config.api.key,
      projectId: config.api.projectId,
      log: log.child({ component: 'api' }),
      ...(opts.apiRetry ? { retry: opts.apiRetry } : {}),
      ...(opts.apiTimeoutMs ? { timeoutMs: opts.apiTimeoutMs } : {}),
      budgets: {
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
      },
    });

    let running = false;
    const slack = createSlackApp({
      config,
      log,
      health: () => ({ ok: running, detail: { mode: config.slack.mode } }),
    });
    const chat = createSlackJobChat(slack.app.client, log);

    const wakeups: (() => void)[] = [];
    const wakeAll = () => {
      for (const w of wakeups) w();
    };
    const jobs = createJobService({
      store,
      api,
      chat,
      log,
      poll: { intervalMs: config.poll.intervalMs },
      leaseMs: config.leaseMs,
      wake: wakeAll,
    });
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
    registerListeners(slack.app, {
      jobs,
      store,
      reports,
      poster,
      timeZone: config.digest.timeZone,
      log,
    });

    const notifier = startNotifier({
      store,
      chat,
      log,
      owner,
      leaseMs: config.leaseMs,
      ...(opts.channelGapMs === undefined ? {} : { channelGapMs: opts.channelGapMs }),
    });
    stack.push({ name: 'notifier', stop: () => notifier.stop() });
    const poller = startPoller({
      store,
      api,
      log,
      backoff: { baseMs: config.poll.intervalMs, maxMs: config.poll.maxIntervalMs },
      owner,
      leaseMs: config.leaseMs,
      ...(opts.followUpGraceMs === undefined ? {} : { followUpGraceMs: opts.followUpGraceMs }),
      ...(opts.troubleAfterMs === undefined ? {} : { troubleAfterMs: opts.troubleAfterMs }),
      onChange: () => notifier.kick(),
    });
    stack.push({ name: 'poller', stop: () => poller.stop() });
    wakeups.push(
      () => poller.kick(),
      () => notifier.kick(),
    );

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
    stack.push({ name: 'housekeeping', stop: () => housekeeping.stop() });
    const recovery = startRecovery({
      store,
      chat,
      deliver: jobs.deliver,
      log,
      staleMs: config.leaseMs,
      firstPoll: jobs.firstPoll,
      wake: wakeAll,
    });
    stack.push({ name: 'recovery', stop: () => recovery.stop() });

    await slack.start();
    running = true;
    if (config.digest.channel) {
      const digest = startDigest({
        store,
        reports,
        poster,
        log,
        channelId: config.digest.channel,
        cron: config.digest.cron,
        timeZone: config.digest.timeZone,
        owner,
        ...opts.digest,
      });
      stack.push({ name: 'digest', stop: async () => digest.stop() });
    }
    // Stop taking work first when shutting down.
    stack.push({
      name: 'slack',
      stop: async () => {
        running = false;
        await slack.stop();
      },
    });
    log.info({ mode: config.slack.mode, port: config.port }, 'bot.started');
  } catch (err) {
    await stopAll();
    throw err;
  }
  return { log, stop: stopAll };
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
