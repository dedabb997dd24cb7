import type { Logger } from '../log.ts';
import type { WorkspaceStore } from '../store/workspace-port.ts';
import type { WorkspaceKey } from '../store/workspace-records.ts';
import { createForgetSweep } from './forget.ts';

/**
 * An operator's forget (`npm run forget`): the workspace is treated as uninstalled now (its
 * jobs unwatched, its installation and docs key deleted, its forget recorded) with its
 * forget due at once, and the retention sweep runs until nothing due is left, this
 * workspace's forget and any other already due. A workspace that an installation still
 * serves (its org's org-wide one) keeps its data: the sweep cancels such a forget.
 */
export interface ForgetNowReport {
  /** The workspace's rows before, per table. */
  before: Record<string, number>;
  /** And after. */
  after: Record<string, number>;
  /** Installations and docs connections deleted, and jobs unwatched, by this run. */
  installations: number;
  connections: number;
  unwatched: number;
  /** Forgets the sweep settled (this one, an org's teams', others due). */
  settled: number;
}

export async function forgetWorkspaceNow(
  store: WorkspaceStore,
  ws: WorkspaceKey,
  deps: { log: Logger; now: () => number; leaseMs: number },
): Promise<ForgetNowReport> {
  const before = await store.workspaceRows(ws);
  const unwatched = await store.stopWatchingWorkspace(ws, deps.now());
  const at = deps.now();
  const outcome = await store.markUninstalled(ws, at, at);
  // Uninstalled earlier, its forget kept the later date it was given then.
  await store.expediteForget(ws, at);
  const sweep = createForgetSweep(
    { store, log: deps.log, now: deps.now },
    { leaseMs: deps.leaseMs },
  );
  let settled = 0;
  for (;;) {
    const n = await sweep.pass();
    if (n === 0) break;
    settled += n;
  }
  return { before, after: await store.workspaceRows(ws), ...outcome, unwatched, settled };
}
