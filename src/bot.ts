import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { DestinationStream } from 'pino';
import { createAccess } from './access.ts';
import { ApiClient, type RetryOptions } from './api/client.ts';
import { startBackground, startRecoveryLoop } from './background.ts';
import { createBudgets } from './budgets.ts';
import { startDatabaseClock } from './clock.ts';
import type { Config } from './config.ts';
import { slackDoctor } from './doctor-wiring.ts';
import { createInflight } from './inflight.ts';
import { createWatchControl } from './jobs/cancel.ts';
import { createFollowUpForm } from './jobs/follow-up-form.ts';
import { createNotifierScheduler } from './jobs/notifier.ts';
import { createPendingCommands } from './jobs/pending-commands.ts';
import type { BucketLimit } from './jobs/rate-limits.ts';
import { systemClock } from './jobs/rate-limits.ts';
import { createRetries } from './jobs/retry.ts';
import { schedulerPacer } from './jobs/root-pacer.ts';
import { createJobService } from './jobs/service.ts';
import { createJobStatus } from './jobs/status.ts';
import { createLiveness, type Liveness } from './liveness.ts';
import { configSecrets, createLogger, type Logger } from './log.ts';
import { createMetrics, type Metrics } from './metrics.ts';
import { probeEndpoints } from './probes.ts';
import { createProjects } from './projects.ts';
import { createReporting } from './reporting.ts';
import { registerAccessControl } from './slack/access-middleware.ts';
import { createSlackApp, KEEP_ALIVE_GRACE_MS, type SlackApp } from './slack/app.ts';
import { createSlackJobChat } from './slack/chat.ts';
import { createHomePublisher, refreshingHome } from './slack/home.ts';
import { registerListeners } from './slack/listeners/index.ts';
import { recordThreadReplies } from './slack/listeners/thread-replies.ts';
import { responseUrlAnswer } from './slack/respond.ts';
import { type OpenOptions, openStore } from './store/open.ts';
import type { Store } from './store/types.ts';
import {
  createTeardown,
  DRAIN_SHARE,
  drainInflight,
  settleAbandoned,
  type Teardown,
} from './teardown.ts';
import { createWorkLanes, DEFAULT_LANES, type LaneSize, type WorkLanes } from './work-queue.ts';

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
  digest?: { staleClaimMs?: number; retryMs?: number; catchUpMs?: number };
  /** The starts lane after acks (tests fill it to see the busy answer). */
  work?: LaneSize;
  /** The other lanes' sizes (tests). */
  lanes?: Partial<Record<keyof WorkLanes, LaneSize>>;
  /** This process's clock, under the database's (tests run a replica whose clock is off). */
  localClock?: () => number;
  /** Tests keep a handle on the store this way (to take the database away from a running bot). */
  openStore?: (databaseUrl: string, log: Logger, opts: OpenOptions) => Promise<Store>;
}

export interface Bot {
  log: Logger;
  /**
   * Stops taking commands and events, waits for those in flight (three quarters of
   * SHUTDOWN_TIMEOUT_MS at most), cuts short what still waits on the API, stops the loops,
   * closes the HTTP server and the database. The whole stop ends within SHUTDOWN_TIMEOUT_MS:
   * past it, it rejects (ShutdownDeadlineError) and logs `bot.shutdown_deadline` with what
   * it left undone.
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
    secrets: configSecrets(config),
    ...(opts.logDestination ? { destination: opts.logDestination } : {}),
  });
  const teardown = createTeardown(log, config.shutdownTimeoutMs);
  try {
    await assemble(config, opts, log, teardown);
  } catch (err) {
    await teardown.run().catch(() => {});
    throw err;
  }
  return { log, stop: teardown.run };
}

/** During a shutdown, how long a loop's store call may still take. */
const STOPPING_STORE_MS = 1_000;

/** Builds and starts every part; each registers its stop as soon as it exists. */
async function assemble(config: Config, opts: BotOptions, log: Logger, teardown: Teardown) {
  // Names this process in every lease and claim it takes in the shared database.
  const owner = `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
  const store = await (opts.openStore ?? openStore)(
    config.databaseUrl,
    log.child({ component: 'store' }),
    { timeoutMs: config.databaseTimeoutMs },
  );
  teardown.add('store', () => store.close());
  // Leases, staleness and budget windows are stamped and judged on the database's clock.
  const clock = await startDatabaseClock({
    store,
    log,
    everyMs: config.leaseMs / 2,
    ...(opts.localClock ? { local: opts.localClock } : {}),
  });
  teardown.add('clock', () => clock.stop());
  const now = clock.now;
  // The loops' store calls give up after this; a stalled loop makes the bot not ready.
  const liveness = createLiveness(store, { deadlineMs: 2 * config.databaseTimeoutMs });

  const budgets = createBudgets(config, store, now);
  const metrics = createMetrics({
    outboxDepth: () => store.outboxDepth(),
    budgets: { agent: budgets.agent, analytics: budgets.analytics },
    log,
  });
  const inflight = createInflight();
  let accepting = true;
  const slack = createSlack({ config, log, store, metrics, liveness, accepting: () => accepting });
  // Closed late, so that the probes answer (not ready) while everything else stops; a
  // client that keeps a connection open gets at most half of what is left of the deadline.
  teardown.add('slack', () =>
    slack.stop(Math.min(KEEP_ALIVE_GRACE_MS, Math.floor(teardown.remainingMs() / 2))),
  );

  const api = new ApiClient({
    ...apiSettings(config, opts),
    log: log.child({ component: 'api' }),
    budgets: { agent: budgets.agentFor, analytics: budgets.analytics },
    metrics,
  });
  // After the loops (the poller cuts its own polls short and must see that, not a failure);
  // what is still waiting on the API then is work the drain gave up on.
  teardown.add('api', async () => {
    api.stop();
    await settleAbandoned(inflight, log, Math.floor(teardown.remainingMs() / 2));
  });

  // The App Home follows the person's jobs: every root update shown schedules a refresh.
  const home = createHomePublisher({
    client: slack.app.client,
    store,
    agentBudget: budgets.agentFor,
    defaultProjectId: config.api.projectId,
    log,
  });
  teardown.add('home', () => home.stop());
  const chat = refreshingHome(createSlackJobChat(slack.app.client, log, metrics), home);
  const projects = createProjects({
    store,
    defaultProjectId: config.api.projectId,
    keyedProjects: Object.keys(config.api.projectKeys),
    adminUsers: config.adminUsers,
    checkProject: (projectId) => api.checkProject(projectId),
    log,
    now,
  });
  // Work after an ack, in lanes: answers never wait behind starts, starts (I/O) run
  // START_CONCURRENCY at once, reports (CPU) are throttled while requests keep arriving.
  const work = createWorkLanes({
    inflight,
    log,
    sizes: {
      ...opts.lanes,
      starts: opts.work ?? { ...DEFAULT_LANES.starts, concurrency: config.startConcurrency },
    },
  });
  // One per-channel pacer for the notifier's posts and the roots of job starts.
  const scheduler = createNotifierScheduler({
    log,
    clock: { ...systemClock, now },
    channelGapMs: opts.channelGapMs,
    updateLimit: opts.updateLimit,
  });
  const wake = startBackground({
    config,
    opts,
    log,
    teardown,
    api,
    chat,
    owner,
    metrics,
    liveness,
    now,
    scheduler,
  });
  const jobs = createJobService({
    store,
    api,
    chat,
    budget: budgets.agentFor,
    projects,
    log,
    poll: { intervalMs: config.poll.intervalMs },
    leaseMs: config.leaseMs,
    wake,
    metrics,
    botName: () => slack.identity()?.name,
    now,
    pacer: schedulerPacer(scheduler, log),
    // A start waiting for its channel's turn holds no lane slot; its create takes one.
    track: (rest) => inflight.track(rest),
    run: (name, task) => work.starts.offer(name, task),
  });
  const answer = responseUrlAnswer(log);
  startRecoveryLoop({
    config,
    log,
    teardown,
    chat,
    jobs,
    wake,
    opts,
    owner,
    answer,
    now,
    liveness,
  });
  const reporting = createReporting({
    config,
    api,
    store,
    log,
    client: slack.app.client,
    analytics: budgets.analytics,
    now,
  });
  const { reports, poster, insights, insightsPoster } = reporting;
  const timeZone = config.digest.timeZone;
  // Acked /agent commands are recorded while they wait for their start; stopped after the
  // drain, it gives back the ones still waiting, for another replica or the next start.
  const pending = createPendingCommands({ store, owner, leaseMs: config.leaseMs, log, now });
  teardown.add('pending-commands', () => pending.stop());
  const jobStatus = createJobStatus({ store, budget: budgets.agentFor, projects });
  const access = createAccess(config.access);
  const buttons = {
    retry: createRetries({
      store,
      jobs,
      // A thread from before projects were kept is the configured project's.
      budget: (projectId) => budgets.agentFor(projectId ?? config.api.projectId),
      access,
      wake,
      log,
      now,
    }),
    stopWatching: createWatchControl({ store, wake, log, now }),
    followUpForm: createFollowUpForm({ store, jobs, access, log, now }),
  };
  // Before every listener: refused people and conversations reach none of them.
  registerAccessControl(slack.app, {
    access,
    log,
    isJobThread: async (team, channel, ts) =>
      (await store.findThread(team, channel, ts)) !== undefined,
  });
  const doctor = slackDoctor({
    config,
    checkApi: (projectId) => api.checkAccess(projectId),
    projectFor: (teamId, channelId) => projects.forChannel(teamId, channelId),
    ping: () => store.ping(),
    now,
  });
  registerListeners(slack.app, {
    jobs,
    jobStatus,
    doctor,
    home,
    projects,
    store,
    chat,
    botName: () => slack.identity()?.name,
    reports,
    poster,
    log,
    inflight,
    work,
    pending,
    timeZone,
    buttons,
    insights: { insights, insightsPoster, agentBudget: budgets.agentFor },
  });
  slack.beforeAck(recordThreadReplies({ jobs, access, botUserId: () => slack.identity()?.userId }));

  await slack.start();
  const stopDigest = reporting.startWeeklyDigest(
    owner,
    opts.digest,
    liveness.loopStore('digest', Number.POSITIVE_INFINITY),
  );
  if (stopDigest) teardown.add('digest', stopDigest);
  // Once the work in flight is drained, the loops stop; a database that does not answer
  // must not hold each of them for a whole deadline.
  teardown.add('loop deadlines', () => liveness.shorten(STOPPING_STORE_MS));
  // A shutdown stops taking work first, then waits for the work already taken: for most of
  // the deadline, the rest being what the other parts need to stop.
  teardown.abandoned(() => ({
    inflight: inflight.pending,
    queued: work.answers.size + work.starts.size + work.reports.size,
    pendingCommands: pending.waiting,
  }));
  const drainMs = Math.floor(config.shutdownTimeoutMs * DRAIN_SHARE);
  teardown.add('drain', () =>
    drainInflight(inflight, Math.min(drainMs, teardown.remainingMs()), log),
  );
  teardown.add('intake', async () => {
    accepting = false;
    await slack.stopIntake();
  });
  log.info({ mode: config.slack.mode, port: config.port }, 'bot.started');
}

/** The Bolt app, serving the probes and the metrics on PORT beside Slack's own traffic. */
function createSlack(deps: {
  config: Config;
  log: Logger;
  store: Store;
  metrics: Metrics;
  accepting: () => boolean;
  liveness: Liveness;
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
          stalledLoops: () => deps.liveness.stalled(),
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
    projectKeys: config.api.projectKeys,
    ...(opts.apiRetry ? { retry: opts.apiRetry } : {}),
    ...(opts.apiTimeoutMs ? { timeoutMs: opts.apiTimeoutMs } : {}),
  };
}
