import type { Logger } from '../log.ts';
import type { WorkspaceStore } from '../store/workspace-port.ts';
import type { Vault } from './vault.ts';

/**
 * Uninstall forgets: when Slack says the app was removed from a workspace (or an org it was
 * installed in org-wide), or its bot token revoked, the workspace's jobs stop being watched
 * (they run on at the service), its tokens and docs key are deleted at once, and the rest of
 * its data is due to be forgotten after UNINSTALL_RETENTION_DAYS. Slack sends both
 * `tokens_revoked` and `app_uninstalled`, in no set order: the second finds nothing left to
 * delete, and the first uninstall record stands.
 */

/** Where the install was: a workspace (in an org or not), or an org-wide install's org. */
export interface InstallPlace {
  teamId: string | undefined;
  enterpriseId: string | undefined;
  isEnterpriseInstall: boolean;
}

export type UninstallCause = 'app_uninstalled' | 'tokens_revoked';

export type Uninstall = (place: InstallPlace, cause: UninstallCause) => Promise<void>;

export function createUninstall(deps: {
  vault: Pick<Vault, 'markUninstalled'>;
  store: Pick<WorkspaceStore, 'stopWatchingWorkspace'>;
  log: Logger;
  now: () => number;
}): Uninstall {
  const log = deps.log.child({ component: 'uninstall' });
  return async (place, cause) => {
    const { teamId, enterpriseId, isEnterpriseInstall } = place;
    // An org-wide install is the org's alone; a workspace's, its team's (in its org, if any).
    const ws = isEnterpriseInstall ? { enterpriseId } : { enterpriseId, teamId };
    if (!ws.enterpriseId && !ws.teamId) {
      log.warn({ cause }, 'workspace.uninstall_unnamed');
      return;
    }
    // First: which teams an org's install served is forgotten with its docs rows.
    const unwatched = await deps.store.stopWatchingWorkspace(ws, deps.now());
    const outcome = await deps.vault.markUninstalled(ws);
    log.info(
      {
        cause,
        teamId: ws.teamId ?? null,
        enterpriseId: ws.enterpriseId ?? null,
        isEnterpriseInstall,
        installations: outcome.installations,
        connections: outcome.connections,
        unwatched,
        forgetAt: new Date(outcome.forgetAt).toISOString(),
      },
      'workspace.uninstalled',
    );
  };
}
