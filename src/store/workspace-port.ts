import type { WorkspaceSettings } from '../workspace-settings.ts';
import type {
  ConnectedWorkspace,
  ForgetLease,
  ForgetStep,
  InstallationQuery,
  InstallationSummary,
  KeyCheck,
  NewDocsConnection,
  NewInstallation,
  SealedCount,
  SealedInstallation,
  SealedKind,
  SealedSecret,
  SettledWork,
  StoredDocsConnection,
  UninstallOutcome,
  WorkspaceForget,
  WorkspaceKey,
} from './workspace-records.ts';

/**
 * The distributed mode's part of the store: installations, docs connections, uninstalls,
 * and the sealed values' bookkeeping. Secrets come in and go out sealed, as opaque text;
 * sealing and opening happen in src/workspaces/vault.ts, which holds the keys.
 */
export interface WorkspaceStore {
  /** Saves an installation, replacing the one under the same ids (a re-install, a token refresh). */
  saveInstallation(i: NewInstallation): Promise<void>;
  /**
   * Bolt's lookup: an org-wide query (`isEnterpriseInstall`) finds the enterprise's org-wide
   * installation; any other finds the team's own installation, or else, when the query
   * names an enterprise, that enterprise's org-wide one.
   */
  findInstallation(q: InstallationQuery): Promise<SealedInstallation | undefined>;
  /** Deletes exactly the installation the query names (no falling back); false if none. */
  deleteInstallation(q: InstallationQuery): Promise<boolean>;
  /** Every installation's ids and times, nothing secret. */
  listInstallations(): Promise<InstallationSummary[]>;

  /** Connects a workspace's docs project, or replaces its connection; its settings stay. */
  connectDocs(ws: WorkspaceKey, c: NewDocsConnection): Promise<void>;
  /** Forgets the project and its key (the settings stay); false if it was not connected. */
  disconnectDocs(ws: WorkspaceKey, now: number): Promise<boolean>;
  /** The workspace's docs row (connection and settings), if it has one. */
  getDocsConnection(ws: WorkspaceKey): Promise<StoredDocsConnection | undefined>;
  /**
   * The docs rows of a team whatever org it is in (a team id names one workspace across
   * Slack), newest first: for what knows a team only, such as a job thread's App Home.
   */
  docsConnectionsOfTeam(teamId: string): Promise<StoredDocsConnection[]>;
  /** Every workspace with a docs project connected: its project and settings, nothing secret. */
  connectedWorkspaces(): Promise<ConnectedWorkspace[]>;
  /** Replaces the workspace's settings (validated), connected or not. */
  updateWorkspaceSettings(
    ws: WorkspaceKey,
    settings: WorkspaceSettings,
    now: number,
  ): Promise<void>;

  /**
   * In one transaction: deletes the workspace's installations and docs connection (for an
   * org, `teamId` unset: the org-wide installation and the docs connections of its teams
   * that have no installation of their own), and records the uninstall, due to be
   * forgotten at `forgetAt` (kept as first recorded if already uninstalled).
   */
  markUninstalled(ws: WorkspaceKey, now: number, forgetAt: number): Promise<UninstallOutcome>;
  /**
   * The workspace's (for an org, `teamId` unset: its teams that the org-wide install served)
   * active jobs stop being watched, as "Cancel watching" does, by UNINSTALLED_WATCHER: no
   * more polls. The jobs themselves run on. Answers how many. Call it before
   * `markUninstalled`, which forgets which teams an org's install served.
   */
  stopWatchingWorkspace(ws: WorkspaceKey, now: number): Promise<number>;
  /** The workspace's recorded uninstall, if any. */
  pendingForget(ws: WorkspaceKey): Promise<WorkspaceForget | undefined>;
  /** Uninstalls whose data is due to be forgotten by `now`, soonest first. */
  dueForgets(now: number, limit: number): Promise<WorkspaceForget[]>;
  /** Removes the uninstall record (a re-install, or its data forgotten); false if none. */
  clearUninstalled(ws: WorkspaceKey): Promise<boolean>;

  /**
   * The retention sweep takes a due forget: its `forget_at` moves to `until`, a lease no
   * other replica finds due before it runs out. False if it changed since it was read
   * (another replica took it, or a re-install cleared it).
   */
  claimForget(f: WorkspaceForget, until: number): Promise<boolean>;
  /**
   * One batch of a claimed forget, in one transaction: the lease moves from `f.held` to
   * `until` (or the answer is 'lost'), then up to `limit` rows of the first table of
   * src/store/forget-sweep.ts that still holds some of the workspace's are deleted; when
   * none holds any, the forget is done and its record removed.
   */
  forgetBatch(f: ForgetLease, until: number, limit: number): Promise<ForgetStep>;
  /**
   * An org's forget: the teams its org-wide install served (rows naming the org, no install
   * of their own) each get a forget of their own, due with the org's. Answers how many.
   */
  spreadOrgForget(enterpriseId: string, uninstalledAt: number, forgetAt: number): Promise<number>;
  /** How many rows of each table the forget deletes hold the workspace's data now. */
  workspaceRows(ws: WorkspaceKey): Promise<Record<string, number>>;
  /** An operator's forget: the workspace's recorded uninstall is due now; false if none or already due. */
  expediteForget(ws: WorkspaceKey, now: number): Promise<boolean>;

  /**
   * A team with no installation any more: its unsent announcements are settled with
   * `reason` (sent_at set, last_error the reason) and its roots marked shown, leases
   * released, in one transaction; nothing of it is retried. Answers how many of each.
   */
  settleWorkspaceWork(teamId: string, reason: string, now: number): Promise<SettledWork>;

  /** Every key's check value. */
  keyChecks(): Promise<KeyCheck[]>;
  /** Stores a key's check value unless it has one; answers the one stored. */
  putKeyCheck(keyId: string, check: string, now: number): Promise<string>;
  /** How many values each key sealed, by kind (keys with none are left out). */
  sealedCounts(): Promise<SealedCount[]>;
  /**
   * In one transaction, up to `limit` values of `kind` not sealed by `keepKeyId` go through
   * `reseal`, which must answer them sealed by `keepKeyId`; answers how many. Nothing is
   * changed if `reseal` throws.
   */
  resealSecrets(
    kind: SealedKind,
    keepKeyId: string,
    limit: number,
    reseal: (s: SealedSecret) => { sealed: string; keyId: string },
  ): Promise<number>;
}
