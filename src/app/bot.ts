import type { Config } from '../config/config.ts';
import { configSecrets } from '../config/values.ts';
import { slackDoctor } from '../doctor/wiring.ts';
import { createLogger, type Logger } from '../log.ts';
import { registerAccessControl } from '../slack/access-middleware.ts';
import { AGENT_USAGE, AGENT_USAGE_WORKSPACE } from '../slack/blocks.ts';
import { registerListeners } from '../slack/listeners/index.ts';
import { recordThreadReplies } from '../slack/listeners/thread-replies.ts';
import { envelopeMismatch } from '../slack/workspace-claims.ts';
import type { WorkspaceRef } from '../store/types.ts';
import { type Core, openCore } from './core.ts';
import { distributedDoctor, registerWorkspaceSide, type Workspaces } from './distributed.ts';
import { startForgetSweep } from './forgets.ts';
import { buildJobParts, type JobParts } from './job-parts.ts';
import type { Bot, BotOptions } from './options.ts';
import { createReporting, type Reporting } from './reporting.ts';
import { createTeardown, DRAIN_SHARE, drainInflight, type Teardown } from './teardown.ts';

export type { Bot, BotOptions } from './options.ts';

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
  const core = await openCore(config, opts, log, teardown);
  const parts = buildJobParts(core, config, opts, log, teardown);
  const reporting = createReporting({
    config,
    api: core.api,
    store: core.store,
    log,
    client: core.slack.app.client,
    clients: core.slack,
    analytics: core.budgets.analytics,
    now: core.now,
    workspaceDigests: core.workspaces && (() => core.workspaces!.docs.digests()),
    ...(core.workspaces ? { workspaces: reportingSide(core.workspaces, core, config) } : {}),
  });
  teardown.add('embeddings', reporting.stop);
  registerSlackSide(core, parts, reporting, config, log);
  await core.slack.start();
  const stopDigest = reporting.startWeeklyDigest(
    core.owner,
    opts.digest,
    core.liveness.loopStore('digest', Number.POSITIVE_INFINITY),
  );
  if (stopDigest) teardown.add('digest', stopDigest);
  if (core.workspaces)
    startForgetSweep({ config, opts, log, teardown, liveness: core.liveness, now: core.now });
  addShutdownSteps(core, parts, config, teardown, log);
  const distributed = config.distribution ? { distributed: true } : {};
  log.info({ mode: config.slack.mode, port: config.port, ...distributed }, 'bot.started');
}

/** Distributed mode's part of the reports: each workspace's budget and docs site. */
function reportingSide(w: Workspaces, core: Core, config: Config) {
  return {
    analyticsFor: core.budgets.analyticsFor,
    docsBaseUrlOf: async (ws: WorkspaceRef) =>
      (await w.settingsOf(ws)).docsBaseUrl ?? config.visitors.docsBaseUrl,
  };
}

/** The access check before every listener, then the listeners, then the thread replies. */
function registerSlackSide(
  core: Core,
  parts: JobParts,
  reporting: Reporting,
  config: Config,
  log: Logger,
): void {
  const { store, slack, api, budgets, now } = core;
  const { jobs, access, projects, home } = parts;
  const workspaces = core.workspaces;
  // Distributed mode, first: a workspace with no docs project connected reaches nothing.
  if (workspaces)
    registerWorkspaceSide(slack.app, workspaces, {
      store,
      inflight: core.inflight,
      log,
      api,
      home,
    });
  // Before every listener: refused people and conversations reach none of them.
  registerAccessControl(slack.app, {
    access,
    accessOf: parts.accessOf,
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
    ...(workspaces
      ? distributedDoctor(config, store, workspaces, {
          api,
          agentFor: budgets.agentFor,
          analyticsFor: budgets.analyticsFor,
        })
      : {}),
  });
  const { reports, posterFor, insights, insightsPosterFor, gapBook } = reporting;
  registerListeners(slack.app, {
    ...parts,
    doctor,
    usage: workspaces ? AGENT_USAGE_WORKSPACE : AGENT_USAGE,
    store,
    reports,
    posterFor,
    log,
    inflight: core.inflight,
    timeZone: config.digest.timeZone,
    bot: (ws) => slack.botFor(ws),
    insights: { insights, insightsPosterFor, gapBook, agentBudget: budgets.agentFor },
  });
  slack.beforeAck(
    recordThreadReplies({
      jobs,
      access,
      accessOf: parts.accessOf,
      botUserId: async (ws) => (await slack.botFor(ws))?.userId,
      // Before Bolt's authorize and the docs gate: only a workspace installed and connected.
      ...(workspaces
        ? {
            served: workspaces.docs.served,
            sameWorkspace: (body: unknown) => envelopeMismatch(body) === undefined,
          }
        : {}),
    }),
  );
}

/**
 * A shutdown stops taking work first, then waits for the work already taken (for most of
 * the deadline, the rest being what the other parts need to stop), then stops the loops.
 */
function addShutdownSteps(
  core: Core,
  parts: JobParts,
  config: Config,
  teardown: Teardown,
  log: Logger,
): void {
  const { inflight, liveness, slack } = core;
  const { work, pending } = parts;
  // Once the work in flight is drained, the loops stop; a database that does not answer
  // must not hold each of them for a whole deadline.
  teardown.add('loop deadlines', () => liveness.shorten(STOPPING_STORE_MS));
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
    core.stopAccepting();
    await slack.stopIntake();
  });
}
