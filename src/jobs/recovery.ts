import type { Logger } from '../log.ts';
import type { FollowUp, JobThread, PollSchedule, Store } from '../store/types.ts';
import { uncertainNotice, watchAgain } from './follow-ups.ts';
import { type Loop, startLoop } from './loop.ts';
import { type ResumeDeps, resumePendingCommands } from './pending-commands.ts';
import type { FollowUpOutcome, JobChat, Wake } from './ports.ts';
import { PENDING_TS_PREFIX } from './service.ts';

export interface RecoveryDeps {
  store: Store;
  chat: Pick<JobChat, 'findRoot'>;
  /** Sends a follow-up that was recorded but never left (the job service's `deliver`). */
  deliver: (thread: JobThread, f: FollowUp) => Promise<FollowUpOutcome>;
  log: Logger;
  /** Work still in progress after this long (LEASE_MS) was cut off by a crash. */
  staleMs: number;
  /**
   * A root whose ts was not recorded is looked for only after this long: a root post still
   * in flight must not be given up for lost. Default: the Slack client's 15 s timeout
   * (src/slack/app.ts) and a margin, or the lease if that is longer.
   */
  pendingRootMs?: number;
  firstPoll: () => PollSchedule;
  /** Wake the poller and the notifier after a change. */
  wake: Wake;
  /** Acked `/agent` commands whose process died before starting them. */
  commands?: Omit<ResumeDeps, 'store' | 'now'>;
  now?: () => number;
}

const BATCH = 50;
const PENDING_ROOT_MS = 20_000;

export const INTERRUPTED_START =
  'I was interrupted while starting this job (a restart or a storage error), so I cannot tell whether it started. Check your pull requests before running `/agent` again.';
export const START_NOT_SENT =
  'I was interrupted before I could start this job (a restart or a storage error). Nothing was sent to the agent: run `/agent` again.';

/**
 * Finds work a crash (of this process or another replica) cut short and settles it, once
 * across replicas: starts left "Starting", follow-ups recorded but not known to be sent, and
 * acked commands never started.
 * Runs at start and every `staleMs` after.
 */
export function startRecovery(deps: RecoveryDeps): Loop {
  const log = deps.log.child({ component: 'recovery' });
  return startLoop({
    name: 'recovery',
    log,
    idleMs: deps.staleMs,
    pass: async () => {
      // Separate steps: one failing must not skip the other.
      const { commands } = deps;
      const changed = [
        await interruptedStarts(deps, log).catch((err: unknown) => fail(log, 'starts', err)),
        await interruptedFollowUps(deps, log).catch((err: unknown) => fail(log, 'follow_ups', err)),
        commands
          ? await resumePendingCommands(
              { ...commands, store: deps.store, ...(deps.now ? { now: deps.now } : {}) },
              log,
            ).catch((err: unknown) => fail(log, 'commands', err))
          : 0,
      ];
      if (changed.some((n) => n > 0)) deps.wake((deps.now ?? Date.now)());
      return null;
    },
  });
}

function fail(log: Logger, step: string, err: unknown): number {
  log.error({ err, step }, 'recovery.failed');
  return 0;
}

/**
 * A thread still 'starting' long after it was recorded was cut off between recording it
 * and recording the create call's answer. If its root's ts was never recorded, the create
 * call was not made yet: the root is found by its marker and told so (or, never posted, the
 * thread is dropped). Otherwise the job may or may not exist (the call is not idempotent),
 * so it is not resent: the person is told, in the root message.
 */
export async function interruptedStarts(deps: RecoveryDeps, log: Logger): Promise<number> {
  const { store } = deps;
  const now = deps.now ?? Date.now;
  let settled = 0;
  for (const t of await store.staleStarting(now() - deps.staleMs)) {
    if (!t.rootTs.startsWith(PENDING_TS_PREFIX)) {
      if (!(await store.startFailed(t.id, INTERRUPTED_START, now(), 'confirm'))) continue; // a replica did
      log.warn({ threadId: t.id, channelId: t.channelId }, 'job.start_interrupted');
      settled++;
      continue;
    }
    if (now() - t.createdAt < (deps.pendingRootMs ?? Math.max(PENDING_ROOT_MS, deps.staleMs)))
      continue;
    const marker = t.rootTs.slice(PENDING_TS_PREFIX.length);
    // A root posted inside an existing thread (a mention) is looked for in that thread.
    const inThread = t.rootTs !== t.threadTs;
    const since = t.createdAt - 60_000;
    const ts = await deps.chat.findRoot(
      t,
      t.channelId,
      marker,
      since,
      inThread ? t.threadTs : undefined,
    );
    if (ts === null) {
      await store.forgetStart(t.id);
      log.warn({ threadId: t.id, channelId: t.channelId }, 'job.start_abandoned');
      continue;
    }
    const recorded = inThread
      ? await store.setRootTs(t.id, ts, now())
      : await store.setThreadTs(t.id, ts, now());
    if (recorded && (await store.startFailed(t.id, START_NOT_SENT, now(), 'safe'))) {
      log.warn({ threadId: t.id, channelId: t.channelId, ts }, 'job.start_interrupted');
      settled++;
    }
  }
  return settled;
}

/**
 * A follow-up recorded but never sent is sent now (once: taking it is a conditional move).
 * One cut off while being sent may have reached the agent: it is not resent; the thread is
 * told, and the job watched as a new round so that whatever it did is announced.
 */
export async function interruptedFollowUps(deps: RecoveryDeps, log: Logger): Promise<number> {
  const { store } = deps;
  const now = deps.now ?? Date.now;
  let changed = 0;
  for (const f of await store.staleFollowUps('received', now() - deps.staleMs, BATCH)) {
    const thread = await store.getThread(f.threadId);
    if (!thread) continue;
    log.info({ threadId: thread.id, followUpId: f.id }, 'reply.resumed');
    if ((await deps.deliver(thread, f)) === 'sent') changed++;
  }
  for (const f of await store.staleFollowUps('sending', now() - deps.staleMs, BATCH)) {
    const thread = await store.getThread(f.threadId);
    if (!thread) continue;
    const notice = uncertainNotice(f, 'I was interrupted (a restart) while passing it on');
    if (!(await store.followUpUncertain(f, notice, now()))) continue; // a replica did
    await watchAgain(store, thread, deps.firstPoll(), now());
    log.warn({ threadId: thread.id, followUpId: f.id, jobId: thread.jobId }, 'reply.uncertain');
    changed++;
  }
  return changed;
}
