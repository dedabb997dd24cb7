import { ApiError, RateLimited } from '../api/errors.ts';
import type { Logger } from '../log.ts';
import type { WorkspaceStore } from '../store/workspace-port.ts';
import type {
  InstallationQuery,
  StoredDocsConnection,
  WorkspaceKey,
} from '../store/workspace-records.ts';
import type { WorkspaceSettings } from '../workspace-settings.ts';
import type { Vault } from './vault.ts';

/**
 * A workspace's docs connection as its admins manage it from the App Home (distributed
 * mode): who may (whoever installed Docs Agent, or a user on the workspace's own admin
 * list), connecting a project with an admin API key that one read checks before it is
 * sealed, replacing the key, disconnecting, and the workspace's settings. The key goes one
 * way, into the check and the vault: never back out of here, never into a log line.
 */

/** A workspace as an authorized request names it (Bolt's context). */
export interface WorkspaceRef extends WorkspaceKey {
  isEnterpriseInstall?: boolean | undefined;
}

/** What the Home shows of a workspace's docs: nothing secret. */
export interface DocsState {
  /** The key its docs row is under. */
  ws: { enterpriseId: string | null; teamId: string | null };
  connection: { projectId: string; connectedBy: string; connectedAt: number } | null;
  settings: WorkspaceSettings;
  /** Who installed Docs Agent here (for an org-wide install, the org's installer). */
  installerUserId: string | null;
  /** Whether an installation answers for the workspace. */
  installed: boolean;
}

/** Who may connect and change settings: the installer, then the workspace's admin list. */
export function adminsOf(s: Pick<DocsState, 'installerUserId' | 'settings'>): string[] {
  const all = [s.installerUserId, ...(s.settings.adminUsers ?? [])];
  return [...new Set(all.filter((u): u is string => typeof u === 'string' && u !== ''))];
}

export function isAdmin(s: Pick<DocsState, 'installerUserId' | 'settings'>, userId: string) {
  return adminsOf(s).includes(userId);
}

/** Why a key was not saved. The first three are the person's to fix; the others, the API's. */
export type CheckProblem =
  | 'key_refused'
  | 'key_forbidden'
  | 'project_not_found'
  | 'rate_limited'
  | 'not_checked';

export type ConnectOutcome =
  | { ok: true; replaced: boolean }
  | {
      ok: false;
      problem: CheckProblem;
      /** What the API did, in the client's words (never the key): for `not_checked`. */
      detail: string;
      retryAfterS?: number;
    };

/** What the Home and the gates read of a workspace: nothing secret is opened. */
export interface DocsReader {
  /** The workspace an authorized request came from. */
  state(ws: WorkspaceRef): Promise<DocsState>;
  /** A workspace known by its team alone (a job's Home refresh): its docs row's, if any. */
  stateOfTeam(teamId: string): Promise<DocsState>;
  /** Installed and connected: what the distributed mode serves. */
  served(ws: WorkspaceRef): Promise<boolean>;
  /** The connected workspaces whose settings name a digest channel: their own digests. */
  digests(): Promise<WorkspaceDigest[]>;
}

/** A connected workspace's weekly digest, as its settings say (unset: the deployment's). */
export interface WorkspaceDigest {
  ws: { teamId: string; enterpriseId: string | null };
  projectId: string;
  channelId: string;
  cron: string | undefined;
  timeZone: string | undefined;
}

export type DocsReaderStore = Pick<
  WorkspaceStore,
  'findInstallation' | 'getDocsConnection' | 'docsConnectionsOfTeam' | 'connectedWorkspaces'
>;

export interface DocsAdminDeps {
  reader: DocsReader;
  store: Pick<WorkspaceStore, 'getDocsConnection'>;
  vault: Pick<Vault, 'connectDocs' | 'disconnectDocs' | 'updateSettings'>;
  /** One authenticated read of the project with that key (ApiClient.checkKey). */
  checkKey(projectId: string, apiKey: string): Promise<void>;
  log: Logger;
}

export interface DocsAdmin extends DocsReader {
  /** Checks the key with one read of the project, then seals and saves it. */
  connect(
    ws: WorkspaceRef,
    c: { projectId: string; apiKey: string; userId: string },
  ): Promise<ConnectOutcome>;
  disconnect(ws: WorkspaceRef, userId: string): Promise<boolean>;
  /** Throws SettingsInvalid (the fields named) when the settings do not pass the schema. */
  saveSettings(ws: WorkspaceRef, settings: WorkspaceSettings, userId: string): Promise<void>;
}

const keyOf = (ws: WorkspaceRef) => ({
  enterpriseId: ws.enterpriseId || null,
  teamId: ws.teamId || null,
});

export function createDocsReader(store: DocsReaderStore): DocsReader {
  async function stateOf(
    ws: WorkspaceRef,
    row: StoredDocsConnection | undefined,
  ): Promise<DocsState> {
    const q: InstallationQuery = { ...keyOf(ws), isEnterpriseInstall: ws.isEnterpriseInstall };
    const install = await store.findInstallation(q);
    const c = row?.connection;
    return {
      ws: keyOf(ws),
      connection: c
        ? { projectId: c.projectId, connectedBy: c.connectedBy, connectedAt: c.connectedAt }
        : null,
      settings: row?.settings ?? {},
      installerUserId: install?.installerUserId ?? null,
      installed: install !== undefined,
    };
  }

  return {
    state: async (ws) => stateOf(ws, await store.getDocsConnection(keyOf(ws))),

    async stateOfTeam(teamId) {
      const [row] = await store.docsConnectionsOfTeam(teamId);
      return stateOf(row ?? { teamId }, row);
    },

    async served(ws) {
      if (!ws.teamId && !ws.enterpriseId) return false;
      const row = await store.getDocsConnection(keyOf(ws));
      if (!row?.connection) return false;
      const q = { ...keyOf(ws), isEnterpriseInstall: ws.isEnterpriseInstall };
      return (await store.findInstallation(q)) !== undefined;
    },

    async digests() {
      const out: WorkspaceDigest[] = [];
      for (const w of await store.connectedWorkspaces()) {
        const { digestChannel, digestCron, timeZone } = w.settings;
        // A digest is a team's (an org's own row names no channel of a team).
        if (!w.teamId || !digestChannel) continue;
        const ws = { teamId: w.teamId, enterpriseId: w.enterpriseId };
        out.push({
          ws,
          projectId: w.projectId,
          channelId: digestChannel,
          cron: digestCron,
          timeZone,
        });
      }
      return out;
    },
  };
}

export function createDocsAdmin(deps: DocsAdminDeps): DocsAdmin {
  const { store, vault, reader } = deps;
  const log = deps.log.child({ component: 'docs-admin' });

  return {
    state: (ws) => reader.state(ws),
    stateOfTeam: (teamId) => reader.stateOfTeam(teamId),
    served: (ws) => reader.served(ws),
    digests: () => reader.digests(),

    async connect(ws, c) {
      const ids = { ...keyOf(ws), userId: c.userId, projectId: c.projectId };
      const started = performance.now();
      try {
        await deps.checkKey(c.projectId, c.apiKey);
      } catch (err) {
        const outcome = refusalOf(err);
        const durationMs = Math.round(performance.now() - started);
        // The client's error names the status, never the key; anything else is a bug.
        const status = err instanceof ApiError ? err.status : undefined;
        log.info({ ...ids, problem: outcome.problem, status, durationMs }, 'docs.connect_refused');
        return outcome;
      }
      const before = await store.getDocsConnection(keyOf(ws));
      const replaced = before?.connection != null;
      await vault.connectDocs(keyOf(ws), {
        projectId: c.projectId,
        apiKey: c.apiKey,
        connectedBy: c.userId,
      });
      log.info({ ...ids, replaced }, 'docs.connected');
      return { ok: true, replaced };
    },

    async disconnect(ws, userId) {
      const done = await vault.disconnectDocs(keyOf(ws));
      log.info({ ...keyOf(ws), userId, disconnected: done }, 'docs.disconnected');
      return done;
    },

    async saveSettings(ws, settings, userId) {
      await vault.updateSettings(keyOf(ws), settings);
      log.info({ ...keyOf(ws), userId, fields: Object.keys(settings) }, 'docs.settings_saved');
    },
  };
}

/** The check's failure as the person is told it: which field is wrong, or try again. */
function refusalOf(err: unknown): Extract<ConnectOutcome, { ok: false }> {
  if (!(err instanceof ApiError))
    return { ok: false, problem: 'not_checked', detail: 'something went wrong on our side' };
  switch (err.kind) {
    case 'unauthorized':
      return { ok: false, problem: 'key_refused', detail: err.message };
    case 'forbidden':
      return { ok: false, problem: 'key_forbidden', detail: err.message };
    case 'not_found':
      return { ok: false, problem: 'project_not_found', detail: err.message };
    case 'rate_limited': {
      const ms = err instanceof RateLimited ? err.retryAfterMs : 0;
      const retryAfterS = Math.ceil(ms / 1000);
      return { ok: false, problem: 'rate_limited', detail: err.message, retryAfterS };
    }
    default:
      return { ok: false, problem: 'not_checked', detail: err.message };
  }
}
