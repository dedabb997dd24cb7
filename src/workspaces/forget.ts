import type { Logger } from '../log.ts';
import { FORGOTTEN_TABLES } from '../store/forget-sweep.ts';
import type { WorkspaceStore } from '../store/workspace-port.ts';
import type { WorkspaceForget } from '../store/workspace-records.ts';

/**
 * The retention sweep: an uninstalled workspace's data, kept UNINSTALL_RETENTION_DAYS after
 * the uninstall (its tokens and docs key went at once, src/workspaces/uninstall.ts), is
 * deleted once that is past: job threads with their announcements and follow-ups, acked
 * commands, channel projects, the docs row and its settings (src/store/forget-sweep.ts lists
 * them). In batches of one transaction each, under a lease on the forget, so that two
 * replicas never work on one workspace at once and a replica that stops or dies mid-way
 * leaves the rest to the next pass. A workspace installed again before its forget is due
 * keeps its data (the install clears the forget); one served by its org's org-wide install
 * again is kept too. One line per workspace forgotten, with the rows deleted per table.
 */

export interface ForgetSweep {
  /** Works through the forgets due now (up to a pass's worth); answers how many it settled. */
  pass(): Promise<number>;
}

export interface ForgetSweepOptions {
  /** How long a replica holds a forget between two batches (LEASE_MS). */
  leaseMs: number;
  /** Rows deleted per transaction. */
  batchSize?: number;
  /** Forgets taken per pass. */
  perPass?: number;
  /** False once the bot is stopping: a forget under way is left at a batch's end. */
  running?: () => boolean;
}

type SweepStore = Pick<
  WorkspaceStore,
  | 'dueForgets'
  | 'claimForget'
  | 'forgetBatch'
  | 'spreadOrgForget'
  | 'findInstallation'
  | 'clearUninstalled'
>;

const DEFAULT_BATCH = 500;
const DEFAULT_PER_PASS = 20;

export function createForgetSweep(
  deps: { store: SweepStore; log: Logger; now: () => number },
  opts: ForgetSweepOptions,
): ForgetSweep {
  const { store, now } = deps;
  const log = deps.log.child({ component: 'forget' });
  const running = opts.running ?? (() => true);
  const batch = opts.batchSize ?? DEFAULT_BATCH;

  /** Whether an installation serves the workspace now (its org's org-wide one included). */
  const served = async (f: WorkspaceForget) =>
    (await store.findInstallation(
      f.teamId === null
        ? { enterpriseId: f.enterpriseId, isEnterpriseInstall: true }
        : { enterpriseId: f.enterpriseId, teamId: f.teamId },
    )) !== undefined;

  /** Deletes the workspace's rows batch by batch while the lease holds; answers how it ended. */
  async function drain(f: WorkspaceForget, held: number, rows: Record<string, number>) {
    for (;;) {
      if (!running()) return 'paused' as const;
      const until = now() + opts.leaseMs;
      const step = await store.forgetBatch({ ...f, held }, until, batch);
      if (step.state !== 'deleted') return step.state;
      rows[step.table] = (rows[step.table] ?? 0) + step.rows;
      held = until;
    }
  }

  async function forget(f: WorkspaceForget): Promise<boolean> {
    const ids = { teamId: f.teamId, enterpriseId: f.enterpriseId };
    if (await served(f)) {
      if (await store.clearUninstalled(f))
        log.info({ ...ids, reason: 'installed' }, 'workspace.forget_cancelled');
      return true;
    }
    const until = now() + opts.leaseMs;
    if (!(await store.claimForget(f, until))) return false;
    const started = now();
    // An org's forget hands the teams its install served a forget each, taken next.
    const teams =
      f.teamId === null && f.enterpriseId !== null
        ? await store.spreadOrgForget(f.enterpriseId, f.uninstalledAt, f.forgetAt)
        : undefined;
    const rows = Object.fromEntries(FORGOTTEN_TABLES.map((t) => [t, 0]));
    const end = await drain(f, until, rows);
    const line = {
      ...ids,
      uninstalledAt: new Date(f.uninstalledAt).toISOString(),
      rows,
      ...(teams === undefined ? {} : { teams }),
      ms: now() - started,
    };
    if (end === 'done') log.info(line, 'workspace.forgotten');
    // A re-install in the middle, or the lease lost: what is left stays (or is the next
    // holder's to delete).
    else if (end === 'lost') log.warn(line, 'workspace.forget_interrupted');
    else log.info(line, 'workspace.forget_paused');
    return end === 'done';
  }

  return {
    async pass() {
      const due = await store.dueForgets(now(), opts.perPass ?? DEFAULT_PER_PASS);
      let settled = 0;
      for (const f of due) {
        if (!running()) break;
        try {
          if (await forget(f)) settled += 1;
        } catch (err) {
          // Another pass takes it up again once its lease has run out.
          log.error(
            { err, teamId: f.teamId, enterpriseId: f.enterpriseId },
            'workspace.forget_failed',
          );
        }
      }
      return settled;
    },
  };
}
