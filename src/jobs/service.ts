import { randomUUID } from 'node:crypto';
import type { Budget, BudgetSlot } from '../api/budget.ts';
import type { ApiClient } from '../api/client.ts';
import { ApiError, BudgetExhausted } from '../api/errors.ts';
import type { Job } from '../api/schemas.ts';
import type { BotRef } from '../invite-hint.ts';
import type { Logger } from '../log.ts';
import type { Projects } from '../projects.ts';
import type { JobThread, Store, WorkspaceRef } from '../store/types.ts';
import { withDeadline } from './deadline.ts';
import { budgetSpentText, describeFailure, startRetry } from './failures.ts';
import { createFollowUps } from './follow-ups.ts';
import { type JobChat, type JobMetrics, noJobMetrics, type Wake } from './ports.ts';
import { type RootPacer, unpaced } from './root-pacer.ts';
import { queuedText, rootSteps, type StartRequest } from './root-steps.ts';
import { docsWorkspaceOf, toSnapshot } from './snapshot.ts';

export { PENDING_TS_PREFIX, type StartRequest } from './root-steps.ts';

export interface JobServiceDeps {
  store: Store;
  api: Pick<ApiClient, 'createJob' | 'sendMessage'>;
  chat: JobChat;
  /**
   * The project's agent budget: a start takes its slot before anything is posted; a spent
   * budget is told to the requester alone, with when the next slot opens, and leaves
   * nothing in the channel.
   */
  budget: (projectId: string) => Pick<Budget, 'take'>;
  /** The project a channel's jobs go to. */
  projects: Pick<Projects, 'forChannel'>;
  log: Logger;
  poll: { intervalMs: number };
  /**
   * Every call that starts or feeds a job ends within this (LEASE_MS): past it, another
   * replica's recovery may treat the work as interrupted.
   */
  leaseMs: number;
  /** Wake the notifier (and the poller, for a job to poll) after a change. */
  wake: Wake;
  /** Root posts at Slack's per-channel pace, 429s waited out (none: posted at once). */
  pacer?: RootPacer;
  /**
   * Given, `startJob` returns once the start has its budget slot, and hands the rest
   * (waiting for the channel's turn, the root, the create) to `track` (in-flight work a
   * shutdown waits for); without it, `startJob` returns when the start is done.
   */
  track?: (rest: Promise<unknown>) => void;
  /** Where a create runs (the starts lane): false when it has no room, and it runs here. */
  run?: (name: string, task: () => Promise<unknown>) => boolean;
  metrics?: JobMetrics;
  now?: () => number;
  /** Who the bot is in a workspace (its name, or its user id), for the "invite me" hint. */
  bot?: (ws: WorkspaceRef) => Promise<BotRef | undefined>;
}

/** Starting jobs and following up on them. Knows nothing of Bolt. */
export function createJobService(deps: JobServiceDeps) {
  const { store, api, chat, wake } = deps;
  const log = deps.log.child({ component: 'jobs' });
  const now = deps.now ?? Date.now;
  const deadlineMs = Math.floor(deps.leaseMs * 0.8);
  const metrics = deps.metrics ?? noJobMetrics;
  const pacer = deps.pacer ?? unpaced;
  /**
   * Hands `task` to where the caller runs it (the starts lane, which counts it as in flight)
   * or, without room there, runs it here (tracked); the promise settles with it.
   */
  const handOver = (name: string, task: () => Promise<void>): { done: Promise<void> } => {
    let go = () => Promise.resolve();
    const done = new Promise<void>((resolve, reject) => {
      go = () => task().then(resolve, reject);
    });
    // A tracked start returns before its create ends and nobody waits for `done`: its
    // failure (the job created, its record not written: the database went away) is logged
    // here, never left to end the process as an unhandled rejection.
    done.catch((err: unknown) => log.error({ err, task: name }, 'job.handover_failed'));
    if (!deps.run?.(name, go)) deps.track?.(go().catch(() => {}));
    return { done };
  };
  const { recordThread, rootNotPosted, commandEnded } = rootSteps({ ...deps, log, now });
  const firstPoll = () => ({
    nextPollAt: now() + deps.poll.intervalMs,
    pollIntervalMs: deps.poll.intervalMs,
  });

  /**
   * The budget slot is taken first (nothing is posted without one), then the thread is
   * recorded (under a placeholder ts and a marker the root carries), then the root message
   * goes out, so that no root is ever posted that a recovery pass cannot find; the job is
   * created last, with the slot taken first, so none exists without a thread. If the bot
   * cannot post in the channel, no job is created and the slot is given back. `reply`
   * answers the requester only.
   */
  async function startJob(
    req: StartRequest,
    reply: (text: string) => Promise<void>,
  ): Promise<void> {
    const started = performance.now();
    let unread: unknown;
    const projectId = await deps.projects
      .forChannel(req.teamId, req.channelId)
      .catch((err: unknown) => {
        unread = err;
        return undefined;
      });
    if (projectId === undefined) {
      await commandEnded(req);
      // Distributed mode: the workspace's docs were disconnected since the command came in.
      if (unread instanceof ApiError) {
        log.info({ channelId: req.channelId, kind: unread.kind }, 'job.no_project');
        await reply(`I didn't start a job: ${unread.message}.`);
        return;
      }
      log.error({ err: unread, channelId: req.channelId }, 'job.project_unread');
      await reply(
        "I couldn't read which project this channel uses (a storage error), so I didn't start a job. Please try again.",
      );
      return;
    }
    const slot = await reserve(req, projectId, reply);
    if (!slot) return commandEnded(req);
    // The rest waits for the channel's turn: it holds no slot of the caller's meanwhile,
    // and is in flight (`track`) until its create is handed to the starts lane.
    const posted = postThenHandOver(req, projectId, slot, started, reply).catch((err: unknown) => {
      log.error({ err, channelId: req.channelId }, 'job.start_crashed');
      return undefined;
    });
    if (deps.track) {
      deps.track(posted);
      return;
    }
    await (await posted)?.done;
  }

  /** A start with its slot: the root in the channel's turn, then the create handed over. */
  async function postThenHandOver(
    req: StartRequest,
    projectId: string,
    slot: BudgetSlot,
    started: number,
    reply: (text: string) => Promise<void>,
  ): Promise<{ done: Promise<void> } | undefined> {
    let handedOver = false;
    try {
      const thread = await postRootFor(req, projectId, reply);
      if (!thread) return undefined;
      handedOver = true;
      return handOver('job.create', () => create(thread, started, withContext(req), slot));
    } finally {
      // Nothing was sent to the agent: the slot was never used, and the command is done with.
      if (!handedOver) {
        await slot
          .release()
          .catch((err: unknown) =>
            log.warn({ err, channelId: req.channelId }, 'job.slot_release_failed'),
          );
        await commandEnded(req);
      }
    }
  }

  /**
   * Records the thread and posts its root; the thread as recorded with the root's ts, or
   * undefined when the start ends here (the requester told, or a recovery pass settles it).
   */
  async function postRootFor(
    req: StartRequest,
    projectId: string,
    reply: (text: string) => Promise<void>,
  ): Promise<JobThread | undefined> {
    const marker = randomUUID();
    const { channelId, userId, prompt, threadTs: inThread } = req;
    // Recorded in the channel's turn, right before its root goes: a start waiting for its
    // turn leaves no placeholder that a recovery pass could take for an interrupted one.
    let thread: JobThread | undefined;
    let ts: string | undefined;
    const tellQueued = (waitMs: number) =>
      reply(queuedText(waitMs)).catch((err: unknown) =>
        log.warn({ err, channelId }, 'job.queued_note_failed'),
      );
    try {
      ts = await pacer.post(
        { teamId: req.teamId, channelId },
        async () => {
          thread ??= await recordThread(req, projectId, marker, reply);
          if (!thread) return undefined;
          const posted = await chat.postRoot(req, {
            channelId,
            userId,
            prompt,
            marker,
            ...(inThread ? { threadTs: inThread } : {}),
            ...(req.context ? { contextMessages: req.context.messages } : {}),
            ...(req.origin ? { origin: req.origin } : {}),
          });
          return posted.ts;
        },
        (waitMs) => void tellQueued(waitMs),
      );
    } catch (err) {
      await rootNotPosted(req, thread, err, reply);
      return undefined;
    }
    if (!thread || ts === undefined) return undefined;
    // If this write fails the root stays "Starting"; the recovery pass finds it by its
    // marker and settles it. The create call is not made: nothing was sent to the agent.
    try {
      // False when a recovery pass gave this start up for lost meanwhile: no job then.
      const recorded = inThread
        ? await store.setRootTs(thread.id, ts, now())
        : await store.setThreadTs(thread.id, ts, now());
      if (!recorded) {
        log.warn({ threadId: thread.id, channelId }, 'job.start_given_up');
        return undefined;
      }
    } catch (err) {
      log.error({ err, threadId: thread.id, channelId }, 'job.record_failed');
      return undefined;
    }
    return inThread ? { ...thread, rootTs: ts } : { ...thread, threadTs: ts, rootTs: ts };
  }

  /**
   * The create call for a thread whose root is posted and recorded ('starting'): from a
   * start, or from a retry that claimed a failed start (which sends the prompt alone: the
   * thread's context is not kept). Records what came of it.
   */
  async function create(
    thread: JobThread,
    started = performance.now(),
    prompt = thread.prompt,
    slot?: BudgetSlot,
  ): Promise<void> {
    let job: Job;
    try {
      job = await withDeadline('job.create', deadlineMs, (signal) =>
        api.createJob(prompt, {
          signal,
          project: thread.projectId ?? undefined,
          workspace: docsWorkspaceOf(thread),
          slot,
        }),
      );
    } catch (err) {
      if (!(err instanceof ApiError)) log.error({ err, threadId: thread.id }, 'job.create_crashed');
      else
        log.warn(
          { err, threadId: thread.id, kind: err.kind, applied: err.applied },
          'job.create_failed',
        );
      await store.startFailed(thread.id, describeFailure(err, 'create'), now(), startRetry(err));
      wake();
      return;
    }
    // The job exists now: a failure to record it must not invite a second /agent. The
    // thread stays 'starting' and the next recovery pass says so in the thread; the log
    // line below (written first) keeps the job id.
    log.info({ jobId: job.id, threadId: thread.id }, 'job.accepted');
    metrics.jobCreated();
    const schedule = firstPoll();
    await store.attachJob(thread.id, toSnapshot(job), schedule, now());
    log.info(
      {
        jobId: job.id,
        threadId: thread.id,
        channelId: thread.channelId,
        durationMs: Math.round(performance.now() - started),
      },
      'job.created',
    );
    wake(schedule.nextPollAt);
  }

  /**
   * The start's agent budget slot, taken (counted and recorded under the budget's lock, so
   * replicas racing for the last slot cannot both have it) before anything is posted. A
   * spent budget is told to the requester alone, with when the next slot opens, and nothing
   * appears in the channel; so is a store that cannot be read (nothing is started then).
   */
  async function reserve(
    req: StartRequest,
    projectId: string,
    reply: (text: string) => Promise<void>,
  ): Promise<BudgetSlot | undefined> {
    const who = { channelId: req.channelId, userId: req.userId, projectId };
    try {
      return await deps.budget(projectId).take('job.create');
    } catch (err) {
      if (err instanceof BudgetExhausted) {
        log.info(who, 'job.budget_spent');
        await reply(budgetSpentText(err.limit ?? 100, err.retryAt.getTime(), 'create'));
      } else {
        log.error({ err, ...who }, 'job.budget_unread');
        await reply(
          "I couldn't check this project's agent budget (a storage error), so I didn't start a job. Please try again.",
        );
      }
      return undefined;
    }
  }

  const followUps = createFollowUps({ ...deps, log, now, deadlineMs, firstPoll, metrics });
  return {
    startJob,
    /** A retry's create, for a thread it claimed back to 'starting' (src/jobs/retry.ts). */
    create,
    recordReply: followUps.recordReply,
    deliverReply: followUps.deliverReply,
    deliver: followUps.deliver,
    /** When a job just started or fed is first polled. */
    firstPoll,
  };
}

export type JobService = ReturnType<typeof createJobService>;

/**
 * What the agent is asked: the prompt, then the thread's earlier messages (already bounded
 * and formatted by the chat side) marked as context, so the request stays first and clear.
 */
export function withContext(req: Pick<StartRequest, 'prompt' | 'context'>): string {
  if (!req.context) return req.prompt;
  return `${req.prompt}\n\n---\nContext: the ${req.context.messages} earlier message(s) of the Slack thread this request was made in, oldest first:\n${req.context.text}`;
}
