import type { JobThread, WorkspaceRef } from './records.ts';
import type {
  Counts,
  DigestClaim,
  GapExpected,
  GapSeen,
  GapSummary,
  InsightGap,
  NewGap,
  ReportHeadline,
  VisitorPoint,
} from './state-records.ts';

/**
 * The store's port for the bot's own state: chart points, the report cache and headline,
 * text vectors, digest claims and insight gaps. It is per workspace: every method takes the
 * workspace `ws` first, as ./scope.ts says (the single workspace's is SINGLE_WORKSPACE), and
 * never reads or changes another's. Part of `Store` (./port.ts).
 */
export interface StateStore {
  /** A workspace's stored chart point and when its counts were fetched. */
  getVisitorPoint(ws: WorkspaceRef, rangeKey: string): Promise<VisitorPoint | undefined>;
  /** Stores a workspace's chart point, replacing its own under that key (a settled refresh). */
  putVisitorPoint(ws: WorkspaceRef, rangeKey: string, counts: Counts, now: number): Promise<void>;
  /** Keeps the last report's headline, replacing the one before (the App Home shows it). */
  putReportHeadline(ws: WorkspaceRef, h: ReportHeadline): Promise<void>;
  lastReportHeadline(ws: WorkspaceRef): Promise<ReportHeadline | undefined>;
  /** A cached report's body, unless it expired by `now`. */
  cachedReport(ws: WorkspaceRef, key: string, now: number): Promise<string | undefined>;
  /** Caches a report's body until `expiresAt`, replacing any; drops every workspace's expired ones. */
  cacheReport(
    ws: WorkspaceRef,
    key: string,
    body: string,
    expiresAt: number,
    now: number,
  ): Promise<void>;
  /** The stored vectors of `model` among these text hashes, by hash (src/store/text-vectors.ts). */
  textVectors(
    ws: WorkspaceRef,
    model: string,
    hashes: readonly string[],
  ): Promise<Map<string, string>>;
  /**
   * Stores vectors of `model` by text hash (replacing any), stamped `now`, and drops every
   * vector stamped before `pruneBefore` (every workspace's: it is the vectors' retention).
   */
  putTextVectors(
    ws: WorkspaceRef,
    model: string,
    rows: readonly { hash: string; vector: string }[],
    now: number,
    pruneBefore: number,
  ): Promise<void>;

  /**
   * Claims (channel, period) for `owner` unless it is posted or claimed by someone whose
   * last sign of life (claim or heartbeat) is younger than `staleMs`. An older claim never
   * marked posted is taken over ('stale').
   */
  claimDigest(
    ws: WorkspaceRef,
    channelId: string,
    periodKey: string,
    owner: string,
    now: number,
    staleMs: number,
  ): Promise<DigestClaim>;
  /** The owner is still at it; false if the claim is no longer `owner`'s (taken over). */
  heartbeatDigest(
    ws: WorkspaceRef,
    channelId: string,
    periodKey: string,
    owner: string,
    now: number,
  ): Promise<boolean>;
  markDigestPosted(
    ws: WorkspaceRef,
    channelId: string,
    periodKey: string,
    owner: string,
    now: number,
  ): Promise<boolean>;

  /** A project's content gaps, most recently listed first, without their evidence. */
  gapsOf(ws: WorkspaceRef, projectId: string, limit: number): Promise<GapSummary[]>;
  /**
   * Records gaps listed for the first time, 'open' (a key the project has already keeps its
   * row: two reports at once make one), and answers each as stored, in the order given.
   * Forgets open gaps no report listed for 180 days.
   */
  addGaps(ws: WorkspaceRef, gaps: NewGap[], now: number): Promise<InsightGap[]>;
  /**
   * Known gaps listed again: their word sets and when; their evidence and title too unless
   * the evidence kept is of a later period.
   */
  sawGaps(ws: WorkspaceRef, seen: GapSeen[], now: number): Promise<void>;
  /** A gap of the workspace and its job (its latest thread), if any. */
  gapWithThread(
    ws: WorkspaceRef,
    id: number,
  ): Promise<{ gap: InsightGap; thread: JobThread | undefined } | undefined>;
  /** The job (latest thread) of each of these gaps of the workspace that has one. */
  gapThreads(ws: WorkspaceRef, ids: readonly number[]): Promise<Map<number, JobThread>>;
  /**
   * Marks a gap drafted by `userId` with the form `token`, if it is still as `expected` (one
   * statement: of two claims at once, one wins); `before` is opaque JSON. False otherwise.
   */
  claimGap(
    ws: WorkspaceRef,
    id: number,
    expected: GapExpected,
    claim: { token: string; userId: string; before: string; now: number },
  ): Promise<boolean>;
  /**
   * A claim whose start never ran (no room to start it): the gap is open again, if the claim
   * `token` still holds it.
   */
  releaseGap(ws: WorkspaceRef, id: number, token: string): Promise<boolean>;
  /** Marks a gap dismissed by `userId`, if it is still as `expected`; false otherwise. */
  dismissGap(
    ws: WorkspaceRef,
    id: number,
    expected: GapExpected,
    userId: string,
    now: number,
  ): Promise<boolean>;
}
