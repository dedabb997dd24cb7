import type { VisitorsPage } from '../api/schemas.ts';
import type { Counts, Store, WorkspaceRef } from '../store/types.ts';
import { apiParams, type ChartBucket, chartBuckets, type DateRange } from './range.ts';

/**
 * How long after a day ends its counts are taken as final. Analytics arrive late (and an
 * incident can hold them back for hours): a point fetched at 00:05 would otherwise be kept
 * short for good.
 */
export const SETTLE_MS = 6 * 3_600_000;
const POINT_CONCURRENCY = 4;

export type ChartPointCounts = ChartBucket & Counts;

/**
 * One `limit=1` call per day (or week) gives its deduplicated totals. A point is kept in the
 * store once fetched after its last day ended plus SETTLE_MS, and used from there for good;
 * a point fetched before that (today's, or one kept by an older version) is fetched again,
 * and the settled answer replaces it.
 */
export async function chartPoints(deps: {
  range: DateRange;
  project: string | undefined;
  /** Whose points these are (src/store/scope.ts): two workspaces on one project keep their own. */
  ws: WorkspaceRef;
  store: Pick<Store, 'getVisitorPoint' | 'putVisitorPoint'>;
  now: () => number;
  settleMs?: number;
  fetchTotals: (r: DateRange) => Promise<VisitorsPage>;
}): Promise<ChartPointCounts[]> {
  const { range, project, ws, store, now } = deps;
  const settleMs = deps.settleMs ?? SETTLE_MS;
  const buckets = chartBuckets(range);
  const out: ChartPointCounts[] = new Array(buckets.length);
  let next = 0;
  const worker = async () => {
    for (let i = next++; i < buckets.length; i = next++) {
      const b = buckets[i]!;
      const r: DateRange = { from: b.from, to: b.to, days: 0, timeZone: range.timeZone };
      const p = apiParams(r);
      // The configured project's points keep the keys they had before projects existed.
      const key = `${project ? `${project}|` : ''}${p.dateFrom}|${p.dateTo}`;
      const settledAt = Date.parse(p.dateTo) + settleMs;
      const kept = now() >= settledAt ? await store.getVisitorPoint(ws, key) : undefined;
      let counts: Counts | undefined = kept && kept.fetchedAt >= settledAt ? kept : undefined;
      if (!counts) {
        const askedAt = now();
        counts = (await deps.fetchTotals(r)).totals;
        if (askedAt >= settledAt) await store.putVisitorPoint(ws, key, counts, askedAt);
      }
      out[i] = { ...b, human: counts.human, ai: counts.ai, total: counts.total };
    }
  };
  // Let every worker finish before failing, so no request outlives the report.
  const results = await Promise.allSettled(Array.from({ length: POINT_CONCURRENCY }, worker));
  const failed = results.find((r) => r.status === 'rejected');
  if (failed) throw failed.reason;
  return out;
}
