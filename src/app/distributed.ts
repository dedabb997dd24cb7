import type { App } from '@slack/bolt';
import type { Budget } from '../api/budget.ts';
import type { ApiClient, ApiWorkspace } from '../api/client.ts';
import { NotConnected } from '../api/errors.ts';
import type { Config } from '../config/config.ts';
import type { WorkspaceDoctor } from '../doctor/wiring.ts';
import type { Inflight } from '../inflight.ts';
import type { Logger } from '../log.ts';
import { readManifestScopes } from '../manifest.ts';
import { registerDocsGate } from '../slack/docs-gate.ts';
import { docsHomePublisher, notConnectedHomeOf, workspaceHome } from '../slack/docs-home.ts';
import type { HomePublisher, WorkspaceHome } from '../slack/home.ts';
import { registerDocsAdmin } from '../slack/listeners/docs-admin.ts';
import { registerUninstall } from '../slack/listeners/uninstall.ts';
import type { OAuthSetup } from '../slack/oauth.ts';
import { registerWorkspaceClaims } from '../slack/workspace-claims.ts';
import type { Store } from '../store/types.ts';
import type { StoredDocsConnection, WorkspaceKey } from '../store/workspace-records.ts';
import type { WorkspaceSettings } from '../workspace-settings.ts';
import {
  createDocsAdmin,
  createDocsReader,
  type DocsReader,
  isAdmin,
} from '../workspaces/docs-admin.ts';
import {
  createDocsKeys,
  type DocsKeys,
  type DocsScope,
  forgettingKeys,
} from '../workspaces/docs-keys.ts';
import { describeKeys, verifyKeys } from '../workspaces/key-check.ts';
import { createRecent, forgettingReads, rememberingInstallations } from '../workspaces/recent.ts';
import { createUninstall, type Uninstall } from '../workspaces/uninstall.ts';
import { createVault, type Vault } from '../workspaces/vault.ts';

/**
 * The distributed mode's parts of the composition root: the key check, the vault, Slack's
 * OAuth install over it, what the Home and the gates read of each workspace's docs, and,
 * once the app exists, the docs gate, the Home's docs buttons and forms, and the uninstall
 * listeners.
 */

export interface Workspaces {
  vault: Vault;
  /** Each workspace's connected project and key, for the API client (opened briefly). */
  keys: DocsKeys;
  /**
   * What the reports and insights services need to serve a workspace (its project, its key
   * through the client, its organisation's analytics budget); undefined while nothing is
   * connected. For `/visitors`, `/insights` and a workspace's own digest.
   */
  docsScope(ws: ApiWorkspace): Promise<DocsScope | undefined>;
  /** A workspace's saved settings (allowlists, docs site, digest): nothing secret. */
  settingsOf(ws: ApiWorkspace): Promise<WorkspaceSettings>;
  /**
   * The workspace's docs row (its key sealed), as the docs gate and the access check read it
   * before a request's first answer: a connected one is kept briefly (../workspaces/recent.ts).
   */
  docsRow(ws: WorkspaceKey): Promise<StoredDocsConnection | undefined>;
  /**
   * The docs row a team's channels use (the newest of the team's, as `/agent` reads its
   * project on its way to the root post), kept as briefly as `docsRow`.
   */
  docsOfTeam(teamId: string): Promise<StoredDocsConnection | undefined>;
  /** What createSlackApp needs to serve installs (src/slack/oauth.ts). */
  oauth: OAuthSetup;
  uninstall: Uninstall;
  /** Each workspace's docs connection and admins, nothing secret opened. */
  docs: DocsReader;
  /** The jobs Home's part for the workspace's docs project (src/slack/home.ts). */
  home: WorkspaceHome;
}

/** How long the connect form's key check may take: Slack closes the form after 3 s. */
export const CONNECT_CHECK_MS = 2_000;

/**
 * ENCRYPTION_KEYS against what the store holds, in distributed mode and whenever keys are
 * set: a missing or wrong key throws KeyCheckError, one line naming key ids, before anything
 * else starts.
 */
export async function checkKeys(config: Config, store: Store): Promise<void> {
  const keyring = config.workspaces.encryptionKeys;
  if (config.distribution || keyring) await verifyKeys(store, keyring);
}

/** The vault and the install over it; undefined in single-workspace mode. */
export async function openWorkspaces(
  config: Config,
  store: Store,
  log: Logger,
  deps: { now: () => number; analyticsFor: (organisation: string) => Budget },
): Promise<Workspaces | undefined> {
  const { now } = deps;
  const distribution = config.distribution;
  if (!distribution) return undefined;
  const keyring = config.workspaces.encryptionKeys;
  // The configuration refuses distributed mode without keys: this is a bug if it happens.
  if (!keyring) throw new Error('ENCRYPTION_KEYS is required in distributed mode');
  const sealed = createVault(store, keyring, {
    retentionDays: config.workspaces.uninstallRetentionDays,
    now,
  });
  const keys = createDocsKeys({ vault: sealed, log, now });
  const installs = createRecent<Awaited<ReturnType<Vault['findInstallation']>>>({ now });
  const rows = createRecent<StoredDocsConnection | undefined>({ now });
  const teams = createRecent<StoredDocsConnection | undefined>({ now });
  // Connecting, replacing, disconnecting and uninstalling drop the key kept for the client;
  // those, installs, token refreshes and settings saved drop the installation and row kept.
  const vault = forgettingReads(
    forgettingKeys(rememberingInstallations(sealed, installs), keys),
    (ws) => {
      installs.forget(ws);
      rows.forget(ws);
      // Kept by team alone: a change to an org-wide install (no team) may touch any team.
      if (ws.teamId) teams.forget({ teamId: ws.teamId });
      else teams.clear();
    },
  );
  const docs = createDocsReader(store);
  // Only a connected row is kept: a connection made elsewhere is seen at the next request.
  const keptIfConnected = (row: StoredDocsConnection | undefined) =>
    row?.connection ? Number.POSITIVE_INFINITY : 0;
  const docsRow = (ws: WorkspaceKey) => {
    const key = { enterpriseId: ws.enterpriseId || null, teamId: ws.teamId || null };
    return rows.get(key, () => store.getDocsConnection(key), keptIfConnected);
  };
  const docsOfTeam = (teamId: string) =>
    teams.get(
      { teamId },
      async () => (await store.docsConnectionsOfTeam(teamId))[0],
      keptIfConnected,
    );
  return {
    vault,
    keys,
    docsRow,
    docsOfTeam,
    async docsScope(ws) {
      const c = await keys.credentialsFor(ws);
      return (
        c && { workspace: ws, projectId: c.projectId, analytics: deps.analyticsFor(c.projectId) }
      );
    },
    settingsOf: async (ws) => (await docsRow(ws))?.settings ?? {},
    oauth: {
      distribution,
      scopes: await readManifestScopes(),
      installations: {
        ...vault,
        clearUninstalled: (ws) => store.clearUninstalled(ws),
        pendingForget: (ws) => store.pendingForget(ws),
      },
      apiUrl: config.slack.apiUrl,
      timeoutMs: config.slack.timeoutMs,
      log,
      // Read beside Bolt's authorize: the docs gate and the access check then find it kept.
      authorizing: (ws) => void docsRow(ws).catch(() => {}),
    },
    uninstall: createUninstall({ vault, store, log, now }),
    docs,
    home: workspaceHome(docs),
  };
}

/**
 * Before every listener (the access check included): an event whose envelope names another
 * workspace than its install reaches nothing (../slack/workspace-claims.ts); a workspace with
 * no docs project connected is told how to connect, and nothing else happens. Then the Home's
 * docs buttons and forms, and the uninstall listeners.
 */
export function registerWorkspaceSide(
  app: App,
  w: Workspaces,
  deps: { store: Store; inflight: Inflight; log: Logger; api: ApiClient; home: HomePublisher },
): void {
  const { store, inflight, log } = deps;
  registerWorkspaceClaims(app, log);
  registerDocsGate(app, {
    connected: async (ws) => (await w.docsRow(ws))?.connection != null,
    home: notConnectedHomeOf(w.docs),
    isJobThread: async (team, channel, ts) =>
      (await store.findThread(team, channel, ts)) !== undefined,
    log,
  });
  const admin = createDocsAdmin({
    reader: w.docs,
    store,
    vault: w.vault,
    checkKey: (projectId, apiKey) => deps.api.checkKey(projectId, apiKey, CONNECT_CHECK_MS),
    log,
  });
  registerDocsAdmin(app, {
    docs: admin,
    publishHome: docsHomePublisher(w.docs, deps.home),
    inflight,
    log,
  });
  registerUninstall(app, { uninstall: w.uninstall, inflight, log });
}

/** How long the doctor's live check of a workspace's key may take (the answer waits for it). */
export const DOCTOR_KEY_CHECK_MS = 3_000;

/**
 * The doctor's distributed-mode parts: installed workspaces and the key check (the
 * deployment's), and the asking workspace's own docs connection, key and budgets, read for
 * that workspace alone (its key opened only for the check's one read).
 */
export function distributedDoctor(
  config: Config,
  store: Store,
  w: Workspaces,
  deps: {
    api: ApiClient;
    agentFor: (projectId: string) => Budget;
    analyticsFor: (organisation: string) => Budget;
  },
): {
  installedWorkspaces(): Promise<number>;
  keyCheck(): Promise<string>;
  workspace: WorkspaceDoctor;
} {
  return {
    installedWorkspaces: async () => (await store.listInstallations()).length,
    keyCheck: () => describeKeys(store, config.workspaces.encryptionKeys),
    workspace: async (who) => {
      const ws = { teamId: who.teamId, enterpriseId: who.enterpriseId };
      const state = await w.docs.state(ws);
      const c = state.connection;
      return {
        isAdmin: isAdmin(state, who.userId),
        ports: {
          connection: async () => c && { projectId: c.projectId, connectedAt: c.connectedAt },
          checkKey: async () => {
            const opened = await w.keys.credentialsFor(ws);
            if (!opened) throw new NotConnected('project.check_key');
            await deps.api.checkKey(opened.projectId, opened.apiKey, DOCTOR_KEY_CHECK_MS);
          },
          agentBudget: (projectId) => deps.agentFor(projectId).status(),
          // The organisation is named by its connected project, as the client counts it.
          analyticsBudget: (projectId) => deps.analyticsFor(projectId).status(),
        },
      };
    },
  };
}
