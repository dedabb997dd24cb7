import type { Budget } from '../api/budget.ts';
import type { ApiWorkspace, WorkspaceCredentials, WorkspaceKeys } from '../api/call.ts';
import type { Logger } from '../log.ts';
import type { WorkspaceKey } from '../store/workspace-records.ts';
import { createRecent } from './recent.ts';
import type { Vault } from './vault.ts';

/**
 * Distributed mode's docs keys for the API client (its `WorkspaceKeys`): each workspace's
 * connected project and admin key, opened from the vault and kept a short while (at most
 * `ttlMs`, like the Slack tokens of ./../slack/workspace-clients.ts), so that a burst of
 * polls does not open the same sealed key each time. A key is dropped at once when this
 * process connects, replaces or disconnects it, on uninstall, and when the service refuses
 * it; another replica's copy ends within `ttlMs`. A workspace with nothing connected is not
 * remembered: its connection is seen the moment it is made. No key is ever logged.
 */

/**
 * What the reports and insights services need to serve one workspace: the workspace (the
 * client finds its key by it), its connected project, its organisation's analytics budget.
 */
export interface DocsScope {
  workspace: ApiWorkspace;
  projectId: string;
  analytics: Budget;
}

export interface DocsKeys extends WorkspaceKeys {
  /** Drops what is kept for a workspace, or for every team of an org (an org-wide key). */
  forget(ws: WorkspaceKey): void;
}

export interface DocsKeysDeps {
  vault: Pick<Vault, 'getDocsConnection'>;
  log: Logger;
  now?: () => number;
  ttlMs?: number;
}

/** How long an opened key is used without reading the vault again. */
export const KEY_TTL_MS = 60_000;
/** The docs row a workspace's key is under: no org is null, as the store keys it. */
const placeOf = (ws: ApiWorkspace): WorkspaceKey => ({
  enterpriseId: ws.enterpriseId || null,
  teamId: ws.teamId,
});

export function createDocsKeys(deps: DocsKeysDeps): DocsKeys {
  const log = deps.log.child({ component: 'docs-keys' });
  // Kept as ./recent.ts keeps reads: one read of a workspace at once, none kept across a forget.
  const kept = createRecent<WorkspaceCredentials | undefined>({
    ...(deps.now ? { now: deps.now } : {}),
    ttlMs: deps.ttlMs ?? KEY_TTL_MS,
    maxTtlMs: KEY_TTL_MS,
  });

  async function open(ws: ApiWorkspace): Promise<WorkspaceCredentials | undefined> {
    const row = await deps.vault.getDocsConnection(placeOf(ws));
    const c = row.connection;
    if (!c) {
      log.debug({ teamId: ws.teamId, enterpriseId: ws.enterpriseId ?? null }, 'docs.no_key');
      return undefined;
    }
    return { projectId: c.projectId, apiKey: c.openKey() };
  }

  return {
    credentialsFor(ws) {
      // Nothing connected is not kept: a connection is seen the moment it is made.
      return kept.get(
        placeOf(ws),
        () => open(ws),
        (c) => (c ? Number.POSITIVE_INFINITY : 0),
      );
    },

    refused(ws) {
      kept.drop(placeOf(ws));
      log.info({ teamId: ws.teamId, enterpriseId: ws.enterpriseId ?? null }, 'docs.key_refused');
    },

    forget(ws) {
      kept.forget(ws);
    },
  };
}

/** The vault, dropping a workspace's kept key whenever its connection changes or ends. */
export function forgettingKeys<
  V extends Pick<Vault, 'connectDocs' | 'disconnectDocs' | 'markUninstalled'>,
>(vault: V, keys: Pick<DocsKeys, 'forget'>): V {
  return {
    ...vault,
    async connectDocs(ws, c) {
      try {
        await vault.connectDocs(ws, c);
      } finally {
        keys.forget(ws);
      }
    },
    async disconnectDocs(ws) {
      try {
        return await vault.disconnectDocs(ws);
      } finally {
        keys.forget(ws);
      }
    },
    async markUninstalled(ws) {
      try {
        return await vault.markUninstalled(ws);
      } finally {
        keys.forget(ws);
      }
    },
  };
}
