import { type AccessOf, createAccess, workspaceAccess } from '../access.ts';
import type { Config } from '../config/config.ts';
import { defaultProjectOf } from '../config/distribution.ts';
import { createWatchControl } from '../jobs/cancel.ts';
import { createFollowUpForm } from '../jobs/follow-up-form.ts';
import { createNotifierScheduler } from '../jobs/notifier.ts';
import { createPendingCommands } from '../jobs/pending-commands.ts';
import type { JobChat } from '../jobs/ports.ts';
import { systemClock } from '../jobs/rate-limits.ts';
import { createRetries } from '../jobs/retry.ts';
import { schedulerPacer } from '../jobs/root-pacer.ts';
import { createJobService } from '../jobs/service.ts';
import { createJobStatus } from '../jobs/status.ts';
import type { Logger } from '../log.ts';
import { createProjects, type Projects } from '../projects.ts';
import { createSlackJobChat } from '../slack/chat.ts';
import { createHomePublisher, refreshingHome } from '../slack/home.ts';
import { responseUrlAnswer } from '../slack/respond.ts';
import { scopeFor } from '../store/scope.ts';
import { createWorkLanes, DEFAULT_LANES } from '../work-queue.ts';
import { startBackground, startRecoveryLoop } from './background.ts';
import type { Core } from './core.ts';
import type { BotOptions } from './options.ts';
import type { Teardown } from './teardown.ts';

/** What every job-side part is built from. */
interface Build {
  core: Core;
  config: Config;
  opts: BotOptions;
  log: Logger;
  teardown: Teardown;
}

/**
 * The agent-job side: the App Home, the projects, the lanes work after an ack runs in, the
 * loops (notifier, poller, recovery), the job service, and the root's buttons.
 */
export function buildJobParts(
  core: Core,
  config: Config,
  opts: BotOptions,
  log: Logger,
  teardown: Teardown,
) {
  const b: Build = { core, config, opts, log, teardown };
  const { home, chat, projects } = buildChatSide(b);
  const { work, wake, jobs } = startJobs(b, chat, projects);
  const access = createAccess(config.access);
  // Distributed mode: each workspace's own lists, from its settings (the deployment's else).
  const workspaces = core.workspaces;
  const accessOf: AccessOf | undefined = workspaces
    ? async (ws) => workspaceAccess(config.access, await workspaces.settingsOf(ws))
    : undefined;
  const { store, budgets, now } = core;
  // Acked /agent commands are recorded while they wait for their start; stopped after the
  // drain, it gives back the ones still waiting, for another replica or the next start.
  const pending = createPendingCommands({
    store,
    owner: core.owner,
    leaseMs: config.leaseMs,
    log,
    now,
  });
  teardown.add('pending-commands', () => pending.stop());
  const buttons = {
    retry: createRetries({
      store,
      jobs,
      access,
      accessOf,
      wake,
      log,
      now,
      // A thread from before projects were kept is the configured project's.
      budget: (projectId) => budgets.agentFor(projectId ?? defaultProjectOf(config)),
    }),
    stopWatching: createWatchControl({ store, wake, log, now }),
    followUpForm: createFollowUpForm({ store, jobs, access, accessOf, log, now }),
  };
  const jobStatus = createJobStatus({ store, budget: budgets.agentFor, projects });
  return { home, chat, projects, work, jobs, pending, access, accessOf, buttons, jobStatus };
}

export type JobParts = ReturnType<typeof buildJobParts>;

/** The App Home, the jobs' chat (which refreshes it), and the channels' projects. */
function buildChatSide({ core, config, log, teardown }: Build) {
  const { store, slack, budgets, api } = core;
  // The App Home follows the person's jobs: every root update shown schedules a refresh.
  const home = createHomePublisher({
    clientFor: (ws) => slack.clientFor(ws),
    workspace: core.workspaces?.home,
    store,
    agentBudget: budgets.agentFor,
    defaultProjectId: defaultProjectOf(config),
    log,
    scope: scopeFor(config.distribution !== undefined),
  });
  teardown.add('home', () => home.stop());
  // Each workspace's posts with its own client (its install's token in distributed mode).
  const chat = refreshingHome(createSlackJobChat(slack, log, core.metrics), home);
  const workspaces = core.workspaces;
  const projects = createProjects({
    store,
    defaultProjectId: defaultProjectOf(config),
    keyedProjects: Object.keys(config.api.projectKeys),
    adminUsers: config.adminUsers,
    checkProject: (projectId) => api.checkProject(projectId),
    // Distributed mode: every channel of a workspace uses the project it connected (its
    // docs row alone, kept briefly: the request was authorized with its installation already).
    connected: workspaces
      ? async (teamId) => {
          const c = (await workspaces.docsOfTeam(teamId))?.connection;
          return c
            ? { projectId: c.projectId, connectedBy: c.connectedBy, connectedAt: c.connectedAt }
            : undefined;
        }
      : undefined,
    log,
    now: core.now,
  });
  return { home, chat, projects };
}

/** The lanes, the loops, the job service and its recovery pass. */
function startJobs(b: Build, chat: JobChat, projects: Projects) {
  const { core, config, opts, log, teardown } = b;
  const { store, api, budgets, metrics, inflight, slack, now, owner, liveness } = core;
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
  // One per-channel pacer for the notifier's posts and the roots of job starts; in
  // distributed mode each workspace's token has its own limits, and workspaces take turns.
  const scheduler = createNotifierScheduler({
    log,
    clock: { ...systemClock, now },
    channelGapMs: opts.channelGapMs,
    updateLimit: opts.updateLimit,
    perWorkspace: config.distribution !== undefined,
  });
  const loopDeps = { config, opts, log, teardown, chat, owner, now, liveness };
  const wake = startBackground({ ...loopDeps, api, metrics, scheduler });
  const jobs = createJobService({
    store,
    api,
    chat,
    budget: budgets.agentFor,
    projects,
    log,
    wake,
    metrics,
    now,
    poll: { intervalMs: config.poll.intervalMs },
    leaseMs: config.leaseMs,
    bot: (ws) => slack.botFor(ws),
    pacer: schedulerPacer(scheduler, log),
    // A start waiting for its channel's turn holds no lane slot; its create takes one.
    track: (rest) => inflight.track(rest),
    run: (name, task) => work.starts.offer(name, task),
  });
  startRecoveryLoop({ ...loopDeps, jobs, wake, answer: responseUrlAnswer(log) });
  return { work, wake, jobs };
}
