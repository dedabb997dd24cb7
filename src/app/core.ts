import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { ApiClient } from '../api/client.ts';
import { NOT_INSTALLED } from '../chat-errors.ts';
import { startDatabaseClock } from '../clock.ts';
import type { Config } from '../config/config.ts';
import { envWorkspace } from '../config/distribution.ts';
import { createInflight, type Inflight } from '../inflight.ts';
import type { Logger } from '../log.ts';
import { createSlackApp, KEEP_ALIVE_GRACE_MS, type SlackApp } from '../slack/app.ts';
import type { OAuthSetup } from '../slack/oauth.ts';
import { openStore } from '../store/open.ts';
import type { Store } from '../store/types.ts';
import { createBudgets } from './budgets.ts';
import { checkKeys, openWorkspaces, type Workspaces } from './distributed.ts';
import { createLiveness, type Liveness } from './liveness.ts';
import { createMetrics, type Metrics } from './metrics.ts';
import type { BotOptions } from './options.ts';
import { probeEndpoints } from './probes.ts';
import { settleAbandoned, type Teardown } from './teardown.ts';

/** What every other part is built on: the store and its clock, Slack, the API, the budgets. */
export interface Core {
  /** Names this process in every lease and claim it takes in the shared database. */
  owner: string;
  store: Store;
  /** The database's clock: leases, staleness and budget windows are judged on it. */
  now: () => number;
  liveness: Liveness;
  budgets: ReturnType<typeof createBudgets>;
  metrics: Metrics;
  inflight: Inflight;
  slack: SlackApp;
  api: ApiClient;
  /** Distributed mode's installs and docs connections; undefined with one workspace. */
  workspaces: Workspaces | undefined;
  /** From the moment a shutdown begins, the probes say "not ready". */
  stopAccepting(): void;
}

export async function openCore(
  config: Config,
  opts: BotOptions,
  log: Logger,
  teardown: Teardown,
): Promise<Core> {
  const owner = `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
  const store = await openCheckedStore(config, opts, log, teardown);
  const clock = await startDatabaseClock({
    store,
    log,
    everyMs: config.leaseMs / 2,
    ...(opts.localClock ? { local: opts.localClock } : {}),
  });
  teardown.add('clock', () => clock.stop());
  // The loops' store calls give up after this; a stalled loop makes the bot not ready.
  const liveness = createLiveness(store, { deadlineMs: 2 * config.databaseTimeoutMs });
  const budgets = createBudgets(config, store, clock.now);
  const metrics = createMetrics({
    outboxDepth: () => store.outboxDepth(),
    budgets: { agent: budgets.agent, analytics: budgets.analytics },
    log,
  });
  const inflight = createInflight();
  let accepting = true;
  const workspaces = await openWorkspaces(config, store, log, {
    now: clock.now,
    analyticsFor: budgets.analyticsFor,
  });
  const slack = createSlack({
    config,
    log,
    store,
    metrics,
    liveness,
    accepting: () => accepting,
    oauth: workspaces?.oauth,
    now: clock.now,
  });
  // Closed late, so that the probes answer (not ready) while everything else stops; a
  // client that keeps a connection open gets at most half of what is left of the deadline.
  teardown.add('slack', () =>
    slack.stop(Math.min(KEEP_ALIVE_GRACE_MS, Math.floor(teardown.remainingMs() / 2))),
  );
  const api = openApi(config, opts, { log, budgets, metrics, inflight, teardown, workspaces });
  const stopAccepting = () => {
    accepting = false;
  };
  return {
    owner,
    store,
    now: clock.now,
    liveness,
    budgets,
    metrics,
    inflight,
    slack,
    api,
    workspaces,
    stopAccepting,
  };
}

/** The store, closed last; a key that cannot open what it holds stops the start here. */
async function openCheckedStore(
  config: Config,
  opts: BotOptions,
  log: Logger,
  teardown: Teardown,
): Promise<Store> {
  const store = await (opts.openStore ?? openStore)(
    config.databaseUrl,
    log.child({ component: 'store' }),
    // The pool's connections open beside the start, so that the first burst finds them open.
    { timeoutMs: config.databaseTimeoutMs, fill: true },
  );
  teardown.add('store', () => store.close());
  // Before anything else starts: a missing or wrong ENCRYPTION_KEYS is one line.
  await checkKeys(config, store);
  return store;
}

/** The API client, stopped after the loops. */
function openApi(
  config: Config,
  opts: BotOptions,
  deps: {
    log: Logger;
    budgets: ReturnType<typeof createBudgets>;
    metrics: Metrics;
    inflight: Inflight;
    teardown: Teardown;
    workspaces: Workspaces | undefined;
  },
): ApiClient {
  const { log, budgets, metrics, inflight, teardown, workspaces } = deps;
  const api = new ApiClient({
    ...apiSettings(config, opts),
    log: log.child({ component: 'api' }),
    // Distributed mode: each workspace's own key, and its organisation's analytics budget.
    ...(workspaces ? { workspaceKeys: workspaces.keys } : {}),
    budgets: {
      agent: budgets.agentFor,
      analytics: workspaces ? budgets.analyticsFor : budgets.analytics,
    },
    metrics,
  });
  // After the loops (the poller cuts its own polls short and must see that, not a failure);
  // what is still waiting on the API then is work the drain gave up on.
  teardown.add('api', async () => {
    api.stop();
    await settleAbandoned(inflight, log, Math.floor(teardown.remainingMs() / 2));
  });
  return api;
}

/** The Bolt app, serving the probes and the metrics on PORT beside Slack's own traffic. */
function createSlack(deps: {
  config: Config;
  log: Logger;
  store: Store;
  metrics: Metrics;
  accepting: () => boolean;
  liveness: Liveness;
  oauth: OAuthSetup | undefined;
  now: () => number;
}): SlackApp {
  const { config, log, store, metrics } = deps;
  const slack: SlackApp = createSlackApp({
    config,
    log,
    oauth: deps.oauth,
    // A team found to have no install: what it still had to post is settled, not retried.
    workspaceGone: (teamId) => store.settleWorkspaceWork(teamId, NOT_INSTALLED, deps.now()),
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

/**
 * The API client's settings. In distributed mode there is no organisation key: each
 * workspace connects its own, which the client takes from `workspaceKeys` for each call, and
 * the docs gate keeps every request of a workspace with no connection from reaching the API.
 */
function apiSettings(config: Config, opts: BotOptions) {
  const workspace = envWorkspace(config);
  return {
    baseUrl: config.api.baseUrl,
    apiKey: workspace?.apiKey ?? '',
    projectId: workspace?.projectId ?? '',
    projectKeys: config.api.projectKeys,
    ...(opts.apiRetry ? { retry: opts.apiRetry } : {}),
    ...(opts.apiTimeoutMs ? { timeoutMs: opts.apiTimeoutMs } : {}),
  };
}
