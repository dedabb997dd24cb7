import type { Generated, Selectable } from 'kysely';
import type {
  AnnouncementKind,
  FollowUpState,
  GapState,
  JobSnapshot,
  JobThread,
  StartRetry,
  ThreadStatus,
} from './types.ts';

/**
 * The database as Kysely sees it, and the mapping between rows and the store's types.
 * Shared by every engine.
 */

/** Row types as the database holds them. */
export interface Database {
  job_threads: {
    id: Generated<number>;
    team_id: string;
    channel_id: string;
    thread_ts: string;
    user_id: string;
    prompt: string;
    job_id: string | null;
    status: ThreadStatus;
    model: string | null;
    repository: string | null;
    ref: string | null;
    pr_link: string | null;
    error: string | null;
    round: Generated<number>;
    follow_up_at: number | null;
    root_version: Generated<number>;
    root_shown_version: Generated<number>;
    next_poll_at: number | null;
    poll_interval_ms: number;
    created_at: number;
    updated_at: number;
    locked_by: string | null;
    locked_until: number | null;
    root_locked_by: string | null;
    root_locked_until: number | null;
    poll_failing_since: number | null;
    changed_at: number | null;
    project_id: string | null;
    start_retry: StartRetry | null;
    unwatched_by: string | null;
    root_reaction: string | null;
    root_ts: string | null;
    context_messages: number | null;
    origin_url: string | null;
    origin_label: string | null;
    command_url: Generated<string | null>;
    /** The insight gap the job was drafted from (migration 0015). */
    gap_id: Generated<number | null>;
    /** The team's Enterprise Grid org, if any (migration 0018). */
    enterprise_id: Generated<string | null>;
  };
  outbox: {
    id: Generated<number>;
    thread_id: number;
    dedupe_key: string;
    kind: AnnouncementKind;
    pr_link: string | null;
    attempts: Generated<number>;
    next_attempt_at: number;
    sent_at: number | null;
    last_error: string | null;
    created_at: number;
    detail: string | null;
  };
  follow_ups: {
    id: Generated<number>;
    thread_id: number;
    reply_key: string;
    reply_ts: string;
    user_id: string;
    text: string;
    state: FollowUpState;
    created_at: number;
    updated_at: number;
  };
  slack_events: { key: string; received_at: number };
  /** Acked `/agent` commands not started yet (src/store/pending-commands.ts). */
  pending_commands: {
    id: Generated<number>;
    team_id: string;
    channel_id: string;
    user_id: string;
    text: string;
    response_url: string;
    conversation: 'channel' | 'im' | 'mpim' | null;
    /** The team's Enterprise Grid org, if any (migration 0018). */
    enterprise_id: Generated<string | null>;
    received_at: number;
    owner: string;
    lease_until: number;
  };
  budget_uses: { id: Generated<number>; bucket: string; used_at: number };
  visitor_points: {
    range_key: string;
    human: number;
    ai: number;
    total: number;
    fetched_at: number;
    /** Its workspace (migration 0020, ./scope.ts): '' for the single workspace. */
    team_id: Generated<string>;
    enterprise_id: Generated<string>;
  };
  channel_projects: {
    team_id: string;
    channel_id: string;
    project_id: string;
    set_by: string;
    set_at: number;
  };
  /**
   * One row per kind of headline ('last') and workspace; the figures as validated JSON. The
   * keys of this table and the four below carry a workspace's team (src/store/scope.ts).
   */
  report_headlines: {
    key: string;
    body: string;
    updated_at: number;
    team_id: Generated<string>;
    enterprise_id: Generated<string>;
  };
  /** Reports of settled periods (src/insights/cache.ts): JSON the store does not read. */
  report_cache: {
    key: string;
    body: string;
    expires_at: number;
    team_id: Generated<string>;
    enterprise_id: Generated<string>;
  };
  /** Sentence vectors of masked texts (src/store/text-vectors.ts): base64 the store does not read. */
  text_vectors: {
    model: string;
    text_hash: string;
    vector: string;
    created_at: number;
    team_id: Generated<string>;
    enterprise_id: Generated<string>;
  };
  /** Content gaps of the insights reports and their state (src/store/gaps.ts). */
  insight_gaps: {
    id: Generated<number>;
    project_id: string;
    gap_key: string;
    kind: string;
    /** JSON: the word sets the gap was listed under. */
    signatures: string;
    title: string;
    /** JSON the store does not read: the latest evidence (src/insights/evidence.ts). */
    evidence: string | null;
    evidence_to: string | null;
    state: GapState;
    claim_token: string | null;
    claimed_by: string | null;
    claimed_at: number | null;
    /** JSON the store does not read: the counts before the gap was drafted. */
    before: string | null;
    pr_at: number | null;
    dismissed_by: string | null;
    dismissed_at: number | null;
    created_at: number;
    last_seen_at: number;
    /** The workspace the row belongs to, '' for the single one (migration 0019, scope.ts). */
    team_id: Generated<string>;
    enterprise_id: Generated<string>;
  };
  /**
   * Slack installations of the distributed mode (src/store/installations.ts), one per
   * (enterprise, team, org-wide or not); '' stands for no enterprise or no team. `sealed` is
   * the whole installation, sealed (src/sealed.ts) by key `key_id`.
   */
  installations: {
    enterprise_id: string;
    team_id: string;
    is_enterprise_install: number;
    installer_user_id: string | null;
    bot_user_id: string | null;
    sealed: string;
    key_id: string;
    installed_at: number;
    updated_at: number;
  };
  /**
   * A workspace's docs project and sealed admin API key (null until connected, or once
   * disconnected), and its settings as JSON (src/workspace-settings.ts).
   */
  docs_connections: {
    enterprise_id: string;
    team_id: string;
    project_id: string | null;
    sealed_key: string | null;
    key_id: string | null;
    connected_by: string | null;
    connected_at: number | null;
    settings: string;
    updated_at: number;
  };
  /** Workspaces uninstalled, and when the rest of their data is due to be forgotten. */
  workspace_forgets: {
    enterprise_id: string;
    team_id: string;
    uninstalled_at: number;
    forget_at: number;
  };
  /** A value sealed by each key when it first sealed: the start-up check opens it. */
  secret_keys: { key_id: string; check_value: string; created_at: number };
  digest_runs: {
    channel_id: string;
    period_key: string;
    owner: string;
    claimed_at: number;
    heartbeat_at: number | null;
    posted_at: number | null;
    /** The workspace the row belongs to, '' for the single one (migration 0019, scope.ts). */
    team_id: Generated<string>;
    enterprise_id: Generated<string>;
  };
}

export type ThreadRow = Selectable<Database['job_threads']>;

/** A conditional update (compare-and-set, fenced mark) took effect: it matched its one row. */
export const updatedOne = (r: { numUpdatedRows: bigint }): boolean =>
  Number(r.numUpdatedRows) === 1;

// Some drivers hand back BIGINT as a string; every number we store fits a double.
export const num = (v: number | string): number => Number(v);
const numOrNull = (v: number | string | null): number | null => (v === null ? null : Number(v));

export function toThread(r: ThreadRow): JobThread {
  return {
    id: num(r.id),
    teamId: r.team_id,
    ...(r.enterprise_id == null ? {} : { enterpriseId: r.enterprise_id }),
    channelId: r.channel_id,
    threadTs: r.thread_ts,
    rootTs: r.root_ts ?? r.thread_ts,
    userId: r.user_id,
    prompt: r.prompt,
    jobId: r.job_id,
    status: r.status,
    model: r.model,
    repository: r.repository,
    ref: r.ref,
    prLink: r.pr_link,
    error: r.error,
    round: num(r.round),
    followUpAt: numOrNull(r.follow_up_at),
    rootVersion: num(r.root_version),
    rootShownVersion: num(r.root_shown_version),
    nextPollAt: numOrNull(r.next_poll_at),
    pollIntervalMs: num(r.poll_interval_ms),
    createdAt: num(r.created_at),
    updatedAt: num(r.updated_at),
    pollFailingSince: numOrNull(r.poll_failing_since),
    changedAt: numOrNull(r.changed_at),
    projectId: r.project_id,
    startRetry: r.start_retry ?? null,
    unwatchedBy: r.unwatched_by ?? null,
    rootReaction: r.root_reaction ?? null,
    contextMessages: numOrNull(r.context_messages),
    origin: r.origin_url ? { url: r.origin_url, label: r.origin_label ?? 'link' } : null,
    ...(r.gap_id == null ? {} : { gapId: num(r.gap_id) }),
  };
}

export function snapshotColumns(s: JobSnapshot) {
  return {
    job_id: s.jobId,
    status: s.status,
    model: s.model,
    repository: s.repository,
    ref: s.ref,
    pr_link: s.prLink,
  };
}

/** What the root message shows; a change in any of these needs a `chat.update`. */
export function shownChanged(t: ThreadRow, s: JobSnapshot): boolean {
  return (
    t.status !== s.status ||
    t.pr_link !== s.prLink ||
    t.model !== s.model ||
    t.repository !== s.repository ||
    t.ref !== s.ref
  );
}
