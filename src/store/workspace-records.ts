import type { WorkspaceSettings } from '../workspace-settings.ts';

/**
 * The records of the distributed mode's part of the store (./workspace-port.ts): Slack
 * installations, docs connections, uninstalls, and the bookkeeping of sealed values. Every
 * secret arrives here sealed (src/sealed.ts) as opaque text, with the id of the key that
 * sealed it; the store never holds a key. Times are epoch milliseconds.
 */

/**
 * A workspace (a team), an Enterprise Grid org (an enterprise without a team), or a team of
 * an org. Null, undefined and '' all mean "none"; at least one id must be given.
 */
export interface WorkspaceKey {
  enterpriseId?: string | null | undefined;
  teamId?: string | null | undefined;
}

/** Bolt's installation lookup: an org-wide install is found by its enterprise alone. */
export interface InstallationQuery extends WorkspaceKey {
  isEnterpriseInstall?: boolean | undefined;
}

/** An installation as listed: ids and times, nothing secret. */
export interface InstallationSummary {
  enterpriseId: string | null;
  teamId: string | null;
  isEnterpriseInstall: boolean;
  installerUserId: string | null;
  botUserId: string | null;
  installedAt: number;
  updatedAt: number;
}

/** An installation with its sealed body (the whole installation, tokens included). */
export interface SealedInstallation extends InstallationSummary {
  sealed: string;
  keyId: string;
}

export interface NewInstallation {
  enterpriseId: string | null;
  teamId: string | null;
  isEnterpriseInstall: boolean;
  installerUserId: string | null;
  botUserId: string | null;
  sealed: string;
  keyId: string;
  now: number;
}

/** A workspace's docs project and its sealed admin API key. */
export interface StoredDocsKey {
  projectId: string;
  sealedKey: string;
  keyId: string;
  connectedBy: string;
  connectedAt: number;
}

/** A workspace's docs row: its connection (null until connected) and its settings. */
export interface StoredDocsConnection {
  enterpriseId: string | null;
  teamId: string | null;
  connection: StoredDocsKey | null;
  settings: WorkspaceSettings;
  updatedAt: number;
}

/** A workspace with its docs connected, as the schedules read it (its key left out). */
export interface ConnectedWorkspace {
  enterpriseId: string | null;
  teamId: string | null;
  projectId: string;
  settings: WorkspaceSettings;
}

export interface NewDocsConnection {
  projectId: string;
  sealedKey: string;
  keyId: string;
  connectedBy: string;
  now: number;
}

/** An uninstalled workspace, and when the rest of its data is due to be forgotten. */
export interface WorkspaceForget {
  enterpriseId: string | null;
  teamId: string | null;
  uninstalledAt: number;
  forgetAt: number;
}

/** A forget as the sweep holds it: its row's ids, and the lease it last took. */
export interface ForgetLease {
  enterpriseId: string | null;
  teamId: string | null;
  /** The `forget_at` this replica last set (or saw, before its claim). */
  held: number;
}

/** What one batch of a forget did. */
export type ForgetStep =
  | { state: 'deleted'; table: string; rows: number }
  /** Nothing of the workspace left: the forget is done, its record removed. */
  | { state: 'done' }
  /** The lease was gone (re-installed, or another replica took over after it ran out). */
  | { state: 'lost' };

/** Who "stopped watching" the jobs of an uninstalled workspace (job_threads.unwatched_by). */
export const UNINSTALLED_WATCHER = 'app_uninstalled';

/** What an uninstall deleted at once. */
export interface UninstallOutcome {
  installations: number;
  connections: number;
}

/** A team's pending Slack work settled because it has no installation any more. */
export interface SettledWork {
  announcements: number;
  roots: number;
}

/** Where sealed values live: installations' bodies, docs connections' API keys. */
export type SealedKind = 'installation' | 'docs_key';

/** One sealed value and the row it belongs to (whose ids its context is made of). */
export interface SealedSecret {
  kind: SealedKind;
  enterpriseId: string | null;
  teamId: string | null;
  /** Always false for a docs key. */
  isEnterpriseInstall: boolean;
  sealed: string;
  keyId: string;
}

/** How many values of a kind a key sealed. */
export interface SealedCount {
  kind: SealedKind;
  keyId: string;
  count: number;
}

/** The value a key sealed when it first sealed (the start-up check opens it). */
export interface KeyCheck {
  keyId: string;
  check: string;
}

/** A workspace key as the rows hold it: '' for none. Refuses a key naming nothing. */
export function workspaceColumns(ws: WorkspaceKey): { enterprise_id: string; team_id: string } {
  const enterprise_id = ws.enterpriseId ?? '';
  const team_id = ws.teamId ?? '';
  if (enterprise_id === '' && team_id === '')
    throw new Error('a workspace is named by a team id, an enterprise id, or both');
  return { enterprise_id, team_id };
}

/** A row's '' back to null. */
export const orNull = (id: string): string | null => (id === '' ? null : id);
