import type { Keyring } from '../sealed.ts';
import type { WorkspaceStore } from '../store/workspace-port.ts';
import type {
  InstallationQuery,
  InstallationSummary,
  UninstallOutcome,
  WorkspaceKey,
} from '../store/workspace-records.ts';
import { type WorkspaceSettings, WorkspaceSettingsSchema } from '../workspace-settings.ts';
import { docsKeyContext, installationContext } from './contexts.ts';
import { ensureKeyCheck } from './key-check.ts';

/**
 * The one place that holds the keys (ENCRYPTION_KEYS) and the store together: installations
 * and docs keys are sealed on their way into the store and opened on their way out, each
 * bound to its row (./contexts.ts). The store sees sealed text only; nothing here logs.
 */

const DAY_MS = 86_400_000;

/** An installation to keep: its ids, and its whole body (Bolt's Installation), as JSON. */
export interface InstallationToSave {
  enterpriseId: string | null;
  teamId: string | null;
  isEnterpriseInstall: boolean;
  installerUserId: string | null;
  botUserId: string | null;
  body: unknown;
}

/** An installation found: its ids and the body as saved (tokens included). */
export interface FoundInstallation extends InstallationSummary {
  body: unknown;
}

/** A workspace's docs project; the key is opened only when asked for (the API client). */
export interface DocsKeyHandle {
  projectId: string;
  connectedBy: string;
  connectedAt: number;
  /** The admin API key, opened now. Never log or show it. */
  openKey(): string;
}

/** A workspace's docs connection (null until connected) and its settings. */
export interface DocsWorkspace {
  connection: DocsKeyHandle | null;
  settings: WorkspaceSettings;
}

/** Settings refused: the fields named, never their values. */
export class SettingsInvalid extends Error {
  readonly fields: string[];
  constructor(fields: string[]) {
    super(`invalid workspace settings: ${fields.join(', ')}`);
    this.name = 'SettingsInvalid';
    this.fields = fields;
  }
}

export interface VaultOptions {
  /** UNINSTALL_RETENTION_DAYS: how long an uninstalled workspace's other data is kept. */
  retentionDays: number;
  now?: () => number;
}

export interface Vault {
  saveInstallation(i: InstallationToSave): Promise<void>;
  findInstallation(q: InstallationQuery): Promise<FoundInstallation | undefined>;
  deleteInstallation(q: InstallationQuery): Promise<boolean>;
  listInstallations(): Promise<InstallationSummary[]>;
  connectDocs(
    ws: WorkspaceKey,
    c: { projectId: string; apiKey: string; connectedBy: string },
  ): Promise<void>;
  disconnectDocs(ws: WorkspaceKey): Promise<boolean>;
  getDocsConnection(ws: WorkspaceKey): Promise<DocsWorkspace>;
  updateSettings(ws: WorkspaceKey, settings: WorkspaceSettings): Promise<void>;
  /** Tokens and docs key deleted at once; the rest is due after the retention. */
  markUninstalled(ws: WorkspaceKey): Promise<UninstallOutcome & { forgetAt: number }>;
}

export function createVault(store: WorkspaceStore, keyring: Keyring, opts: VaultOptions): Vault {
  const now = opts.now ?? Date.now;
  let checked: Promise<void> | undefined;
  /** The sealing key's check value is stored before its first value (once per process). */
  const sealing = async (): Promise<string> => {
    checked ??= ensureKeyCheck(store, keyring, now()).catch((err: unknown) => {
      checked = undefined;
      throw err;
    });
    await checked;
    return keyring.sealingKeyId;
  };

  return {
    async saveInstallation(i) {
      const ids = { ...i, teamId: i.isEnterpriseInstall ? null : i.teamId };
      const keyId = await sealing();
      const sealed = keyring.seal(JSON.stringify(i.body), installationContext(ids));
      await store.saveInstallation({
        enterpriseId: ids.enterpriseId,
        teamId: ids.teamId,
        isEnterpriseInstall: ids.isEnterpriseInstall,
        installerUserId: i.installerUserId,
        botUserId: i.botUserId,
        sealed,
        keyId,
        now: now(),
      });
    },

    async findInstallation(q) {
      const found = await store.findInstallation(q);
      if (!found) return undefined;
      const { sealed: _sealed, keyId: _keyId, ...summary } = found;
      const body: unknown = JSON.parse(keyring.open(found.sealed, installationContext(found)));
      return { ...summary, body };
    },

    deleteInstallation: (q) => store.deleteInstallation(q),
    listInstallations: () => store.listInstallations(),

    async connectDocs(ws, c) {
      if (c.projectId.trim() === '' || c.apiKey === '')
        throw new Error('a docs connection needs a project id and an API key');
      const keyId = await sealing();
      await store.connectDocs(ws, {
        projectId: c.projectId,
        sealedKey: keyring.seal(c.apiKey, docsKeyContext(ws)),
        keyId,
        connectedBy: c.connectedBy,
        now: now(),
      });
    },

    disconnectDocs: (ws) => store.disconnectDocs(ws, now()),

    async getDocsConnection(ws) {
      const row = await store.getDocsConnection(ws);
      const c = row?.connection;
      const connection: DocsKeyHandle | null = c
        ? {
            projectId: c.projectId,
            connectedBy: c.connectedBy,
            connectedAt: c.connectedAt,
            openKey: () => keyring.open(c.sealedKey, docsKeyContext(row)),
          }
        : null;
      return { connection, settings: row?.settings ?? {} };
    },

    async updateSettings(ws, settings) {
      const parsed = WorkspaceSettingsSchema.safeParse(settings);
      if (!parsed.success)
        throw new SettingsInvalid([
          ...new Set(parsed.error.issues.map((i) => String(i.path[0] ?? 'settings'))),
        ]);
      await store.updateWorkspaceSettings(ws, parsed.data, now());
    },

    async markUninstalled(ws) {
      const at = now();
      const outcome = await store.markUninstalled(ws, at, at + opts.retentionDays * DAY_MS);
      // Uninstalled before (app_uninstalled, then tokens_revoked): the first record stands.
      const forget = await store.pendingForget(ws);
      return { ...outcome, forgetAt: forget?.forgetAt ?? at + opts.retentionDays * DAY_MS };
    },
  };
}
