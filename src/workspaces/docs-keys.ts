import type { Budget } from '../api/budget.ts';
import type { ApiWorkspace, WorkspaceCredentials, WorkspaceKeys } from '../api/call.ts';
import type { Logger } from '../log.ts';
import type { WorkspaceKey } from '../store/workspace-records.ts';
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
/** Workspaces whose key is kept; the least recently used goes first. */
const MAX_KEPT = 10_000;

interface Kept {
  credentials: WorkspaceCredentials;
  freshUntil: number;
}

/** The docs row a workspace's key is under: '' for no org, as the store keys it. */
const keyOf = (ws: WorkspaceKey) => `${ws.enterpriseId ?? ''}:${ws.teamId ?? ''}`;

export function createDocsKeys(deps: DocsKeysDeps): DocsKeys {
  const log = deps.log.child({ component: 'docs-keys' });
  const now = deps.now ?? Date.now;
  const ttlMs = Math.min(deps.ttlMs ?? KEY_TTL_MS, KEY_TTL_MS);
  const kept = new Map<string, Kept>();
  const asking = new Map<string, Promise<WorkspaceCredentials | undefined>>();
  /** Counts forgets: a read begun before one does not keep what it opened. */
  let forgets = 0;

  async function open(ws: ApiWorkspace, key: string): Promise<WorkspaceCredentials | undefined> {
    const began = forgets;
    const row = await deps.vault.getDocsConnection({
      enterpriseId: ws.enterpriseId || null,
      teamId: ws.teamId,
    });
    const c = row.connection;
    if (!c) {
      kept.delete(key);
      log.debug({ teamId: ws.teamId, enterpriseId: ws.enterpriseId ?? null }, 'docs.no_key');
      return undefined;
    }
    const credentials = { projectId: c.projectId, apiKey: c.openKey() };
    kept.delete(key);
    if (began !== forgets) return credentials;
    kept.set(key, { credentials, freshUntil: now() + ttlMs });
    if (kept.size > MAX_KEPT) kept.delete(kept.keys().next().value ?? '');
    return credentials;
  }

  return {
    credentialsFor(ws) {
      const key = keyOf({ enterpriseId: ws.enterpriseId || null, teamId: ws.teamId });
      const had = kept.get(key);
      if (had && had.freshUntil > now()) return Promise.resolve(had.credentials);
      // Lookups of one workspace at once share one read of the vault.
      const sharing = asking.get(key);
      if (sharing) return sharing;
      const pending: Promise<WorkspaceCredentials | undefined> = open(ws, key).finally(() => {
        if (asking.get(key) === pending) asking.delete(key);
      });
      asking.set(key, pending);
      return pending;
    },

    refused(ws) {
      kept.delete(keyOf({ enterpriseId: ws.enterpriseId || null, teamId: ws.teamId }));
      log.info({ teamId: ws.teamId, enterpriseId: ws.enterpriseId ?? null }, 'docs.key_refused');
    },

    forget(ws) {
      forgets++;
      asking.clear();
      const team = ws.teamId || '';
      const org = ws.enterpriseId || '';
      for (const key of [...kept.keys()]) {
        const [e, t] = key.split(':') as [string, string];
        if (team ? t === team && (org === '' || e === org) : e === org) kept.delete(key);
      }
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
