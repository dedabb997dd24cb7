import { slidingWindowBudget } from '../api/budget.ts';
import { DIGEST_RETRY_REQUESTS, insightsPart } from '../insights/digest-part.ts';
import type { GapBook } from '../insights/gap-book.ts';
import type { InsightsPoster } from '../insights/ports.ts';
import type { InsightsService } from '../insights/service.ts';
import type { Logger } from '../log.ts';
import { startDigest } from '../reports/digest.ts';
import { trafficPart } from '../reports/digest-parts.ts';
import type { ReportPoster } from '../reports/ports.ts';
import type { ReportService } from '../reports/service.ts';
import { scopedKey } from '../store/scope.ts';
import type { Store, WorkspaceRef } from '../store/types.ts';

/** The digest's timings (tests shorten them) and the insights section's retry allowance. */
export interface DigestOptions {
  staleClaimMs?: number;
  retryMs?: number;
  catchUpMs?: number;
  /** The insights section's retry allowance, in analytics requests a day. */
  retryRequests?: number;
  /** Distributed mode: how often the workspaces' digest settings are read again. */
  syncMs?: number;
}

/** One digest: whose (its state scope), where, when, of which project, posted with what. */
export interface DigestTarget {
  ws: WorkspaceRef;
  channelId: string;
  cron: string;
  timeZone: string;
  /** The workspace's connected project (distributed mode); the configured one when unset. */
  project?: string;
  poster: ReportPoster;
  insightsPoster: InsightsPoster;
}

export interface DigestServices {
  reports: ReportService;
  insights: InsightsService;
  gapBook: GapBook;
  log: Logger;
  /** The database's clock: claims are judged on it. */
  now: () => number;
}

/**
 * Starts one weekly digest (the traffic report, then the insights section in its thread),
 * its claims, retries and retry allowance all its workspace's own; answers its stop.
 */
export function startOneDigest(
  s: DigestServices,
  t: DigestTarget,
  owner: string,
  opts: DigestOptions,
  loopStore: Store,
): () => void {
  const { retryRequests = DIGEST_RETRY_REQUESTS, syncMs: _, ...timing } = opts;
  // The single workspace's allowance keeps the key it had; a workspace's carries its team.
  const channel = scopedKey(t.ws, t.channelId);
  const retries = {
    limit: retryRequests,
    ...slidingWindowBudget(loopStore, {
      key: `digest-retry-requests:${channel}`,
      limit: retryRequests,
      windowMs: 24 * 3_600_000,
      description: "The insights section's retry allowance",
      now: s.now,
    }),
  };
  const own = { ws: t.ws, ...(t.project === undefined ? {} : { project: t.project }) };
  const digest = startDigest({
    store: loopStore,
    log: s.log,
    owner,
    ws: t.ws,
    channelId: t.channelId,
    notice: (channelId, text, threadTs) => t.poster.postNotice(channelId, text, threadTs),
    parts: [
      trafficPart(s.reports, t.poster, own),
      insightsPart(s.insights, t.insightsPoster, s.log.child({ component: 'digest' }), {
        retries,
        gaps: s.gapBook,
        ...own,
      }),
    ],
    cron: t.cron,
    timeZone: t.timeZone,
    now: s.now,
    ...timing,
  });
  return () => digest.stop();
}

/** A report poster made when first used (a workspace's client is looked up then). */
export function lazyReportPoster(get: () => Promise<ReportPoster>): ReportPoster {
  return {
    postReport: async (...a) => (await get()).postReport(...a),
    findReport: async (...a) => (await get()).findReport(...a),
    postNotice: async (...a) => (await get()).postNotice(...a),
  };
}

/** The same for the insights poster. */
export function lazyInsightsPoster(get: () => Promise<InsightsPoster>): InsightsPoster {
  return {
    post: async (...a) => (await get()).post(...a),
    postUnavailable: async (...a) => (await get()).postUnavailable(...a),
    has: async (...a) => (await get()).has(...a),
  };
}
