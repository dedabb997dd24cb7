import type { Installation, InstallationQuery, InstallationStore } from '@slack/bolt';
import { z } from 'zod';
import type { Logger } from '../log.ts';
import type { WorkspaceStore } from '../store/workspace-port.ts';
import type { Vault } from '../workspaces/vault.ts';

/**
 * Bolt's InstallationStore over the vault (src/workspaces/vault.ts): each installation, its
 * tokens included, is sealed on its way into the project's store and opened on its way out.
 * Workspace and org-wide (Enterprise Grid) installs; an org's workspaces are served by the
 * org's install unless they have their own (the store's lookup). A fresh install of a
 * workspace that was uninstalled starts clean: its pending forget is cleared (its tokens,
 * docs key and settings went at the uninstall). A token refresh (Bolt's authorize saves
 * the new tokens here) never brings back an install that was uninstalled meanwhile.
 */

/** What this side needs of the store besides the vault: the uninstall records. */
export type InstallationPort = Pick<
  Vault,
  'saveInstallation' | 'findInstallation' | 'deleteInstallation'
> &
  Pick<WorkspaceStore, 'clearUninstalled' | 'pendingForget'>;

/** No installation answers for the workspace (never installed, or uninstalled). Ids only. */
export class NotInstalled extends Error {
  constructor(q: { teamId?: string | undefined; enterpriseId?: string | undefined }) {
    super(
      `Docs Agent is not installed for team ${q.teamId ?? '-'} (enterprise ${q.enterpriseId ?? '-'})`,
    );
    this.name = 'NotInstalled';
  }
}

/** What Bolt saved, read back: the fields Bolt's authorize uses must have their types. */
const Saved = z.looseObject({
  team: z.looseObject({ id: z.string() }).optional(),
  enterprise: z.looseObject({ id: z.string() }).optional(),
  isEnterpriseInstall: z.boolean().optional(),
  authVersion: z.enum(['v1', 'v2']).optional(),
  bot: z
    .looseObject({
      token: z.string(),
      userId: z.string(),
      id: z.string().optional(),
      scopes: z.array(z.string()),
      refreshToken: z.string().optional(),
      expiresAt: z.number().optional(),
    })
    .optional(),
});

/** The workspace (or org) an installation is for, as the uninstall records name it. */
export function workspaceOf(
  i: Pick<Installation, 'team' | 'enterprise'> & {
    isEnterpriseInstall?: boolean | undefined;
  },
): { enterpriseId: string | null; teamId: string | null; isEnterpriseInstall: boolean } {
  const org = i.isEnterpriseInstall === true;
  return {
    enterpriseId: i.enterprise?.id ?? null,
    teamId: org ? null : (i.team?.id ?? null),
    isEnterpriseInstall: org,
  };
}

export interface VaultInstallationStore extends InstallationStore {
  /**
   * Marks an installation as a fresh install (the OAuth callback's, not a refresh): Bolt's
   * `afterInstallation` calls it with the object it then stores.
   */
  freshInstall(installation: object): void;
}

export function vaultInstallationStore(
  port: InstallationPort,
  log: Logger,
): VaultInstallationStore {
  const fresh = new WeakSet<object>();
  return {
    freshInstall: (installation) => {
      fresh.add(installation);
    },

    async storeInstallation(installation) {
      const ws = workspaceOf(installation);
      const key = { enterpriseId: ws.enterpriseId, teamId: ws.teamId };
      const install = fresh.has(installation);
      if (!install && (await port.pendingForget(key))) {
        // Refreshed tokens of a workspace uninstalled while the refresh was in flight.
        log.warn(key, 'install.refresh_after_uninstall');
        throw new NotInstalled({
          teamId: key.teamId ?? undefined,
          enterpriseId: key.enterpriseId ?? undefined,
        });
      }
      await port.saveInstallation({
        ...ws,
        installerUserId: installation.user?.id ?? null,
        botUserId: installation.bot?.userId ?? null,
        body: installation,
      });
      if (!install) return;
      const reinstalled = await port.clearUninstalled(key);
      log.info({ ...ws, reinstalled }, 'install.stored');
    },

    async fetchInstallation(q: InstallationQuery<boolean>) {
      const found = await port.findInstallation({
        enterpriseId: q.enterpriseId,
        teamId: q.teamId,
        isEnterpriseInstall: q.isEnterpriseInstall,
      });
      if (!found) throw new NotInstalled(q);
      const saved = Saved.safeParse(found.body);
      if (!saved.success) throw new Error('a stored installation is not one Bolt saved');
      return saved.data as unknown as Installation<'v1' | 'v2', boolean>;
    },

    async deleteInstallation(q: InstallationQuery<boolean>) {
      await port.deleteInstallation({
        enterpriseId: q.enterpriseId,
        teamId: q.teamId,
        isEnterpriseInstall: q.isEnterpriseInstall,
      });
    },
  };
}
