import type { Logger } from '../log.ts';
import type { WorkspaceRef } from '../store/types.ts';

/**
 * Distributed mode: every connected workspace whose settings name a digest channel gets its
 * own weekly digest, on its own schedule and time zone, claimed under its own workspace (one
 * post per workspace, channel and period across replicas: src/reports/digest.ts). The list is
 * read at start and again every `everyMs`: a workspace that connects, changes its digest's
 * channel, schedule or zone, disconnects or is uninstalled is followed within that time. A
 * digest that cannot start (a schedule that no longer parses) is logged and left out; the
 * others run on. Knows nothing of Slack.
 */
export interface WorkspaceDigestPlan {
  ws: WorkspaceRef;
  projectId: string;
  channelId: string;
  cron: string;
  timeZone: string;
}

export interface WorkspaceDigests {
  /** Reads the list again now (also on its own every `everyMs`). */
  sync(): Promise<void>;
  /** Which workspaces have a digest running (team ids). */
  running(): string[];
  stop(): void;
}

/** How often the workspaces' settings are read again. */
export const DIGESTS_SYNC_MS = 60_000;

export function startWorkspaceDigests(deps: {
  /** The digests the workspaces' settings ask for now. */
  plans: () => Promise<WorkspaceDigestPlan[]>;
  /** Starts one workspace's digest (startDigest with its parts); answers its stop. */
  start: (plan: WorkspaceDigestPlan) => () => void;
  log: Logger;
  everyMs?: number;
}): WorkspaceDigests {
  const log = deps.log.child({ component: 'digests' });
  /** Running digests by workspace, with what they were started for. */
  const running = new Map<string, { signature: string; stop: () => void }>();
  let stopped = false;
  let syncing: Promise<void> = Promise.resolve();

  async function syncNow(): Promise<void> {
    let plans: WorkspaceDigestPlan[];
    try {
      plans = await deps.plans();
    } catch (err) {
      log.warn({ err }, 'digests.unread');
      return;
    }
    if (stopped) return;
    const wanted = new Map(plans.map((p) => [keyOf(p.ws), p]));
    for (const [key, r] of running) {
      const plan = wanted.get(key);
      if (plan && signatureOf(plan) === r.signature) continue;
      r.stop();
      running.delete(key);
      log.info({ teamId: key, changed: plan !== undefined }, 'digests.workspace_stopped');
    }
    for (const [key, plan] of wanted) {
      if (running.has(key)) continue;
      try {
        running.set(key, { signature: signatureOf(plan), stop: deps.start(plan) });
        log.info({ teamId: key }, 'digests.workspace_started');
      } catch (err) {
        log.error({ err, teamId: key }, 'digests.workspace_not_started');
      }
    }
  }

  /** One sync at a time: a slow read is never overtaken by the next. */
  const sync = () => {
    syncing = syncing.then(syncNow);
    return syncing;
  };
  void sync();
  const timer = setInterval(() => void sync(), deps.everyMs ?? DIGESTS_SYNC_MS);
  timer.unref();

  return {
    sync,
    running: () => [...running.keys()],
    stop() {
      stopped = true;
      clearInterval(timer);
      for (const r of running.values()) r.stop();
      running.clear();
    },
  };
}

/** A team names one workspace across Slack. */
const keyOf = (ws: WorkspaceRef) => ws.teamId;
const signatureOf = (p: WorkspaceDigestPlan) =>
  JSON.stringify([p.ws.enterpriseId ?? null, p.projectId, p.channelId, p.cron, p.timeZone]);
