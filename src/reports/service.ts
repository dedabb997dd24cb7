import type { ApiClient } from '../api/client.ts';
import { BudgetExhausted } from '../api/errors.ts';
import type { PageRow, VisitorsPage } from '../api/schemas.ts';
import type { Logger } from '../log.ts';
import type { Counts, Store } from '../store/types.ts';
import {
  type Change,
  DEFAULT_MOVERS,
  dedupeAndSort,
  type Mover,
  movers,
  totalsChange,
} from './aggregate.ts';
import { CORE_REQUESTS, DEFAULT_MAX_REQUESTS, PAGE_LIMIT } from './limits.ts';
import {
  apiParams,
  type ChartBucket,
  chartBuckets,
  type DateRange,
  previousRange,
  todayIn,
} from './range.ts';

const CACHE_MS = 10 * 60_000;
const POINT_CONCURRENCY = 4;
const TOP_PAGES = 10;

export interface ScanState {
  paths: number;
  complete: boolean;
}

export interface Report {
  range: DateRange;
  previous: DateRange;
  totals: Counts;
  previousTotals: Counts;
  changes: Record<keyof Counts, Change>;
  points: (ChartBucket & Counts)[];
  /** Every page row scanned in the range, deduplicated and sorted. */
  rows: PageRow[];
  previousRows: ReadonlyMap<string, PageRow>;
  top: PageRow[];
  movers: { up: Mover[]; down: Mover[] };
  scan: {
    current: ScanState;
    previous: ScanState;
    requests: number;
    /** Why page scanning stopped early, if it did. */
    stoppedBy: 'cap' | 'budget' | null;
  };
  generatedAt: number;
}

export interface ReportServiceDeps {
  api: Pick<ApiClient, 'getVisitorsPage'>;
  store: Pick<Store, 'getVisitorPoint' | 'putVisitorPoint'>;
  log: Logger;
  /** Per-report request cap; must leave room for the core requests. */
  maxRequests?: number;
  now?: () => number;
}

class Stop extends Error {
  readonly reason: 'cap' | 'budget';
  constructor(reason: 'cap' | 'budget') {
    super(reason);
    this.reason = reason;
  }
}

/**
 * Builds traffic reports; used by `/visitors` and the digest alike, knowing nothing of
 * Slack. API errors in the core requests propagate (a half-built report is never passed
 * off as complete); running out of cap or budget while scanning pages yields a report
 * that says how far it got.
 */
export function createReportService(deps: ReportServiceDeps) {
  const log = deps.log.child({ component: 'reports' });
  const now = deps.now ?? Date.now;
  const maxRequests = Math.max(deps.maxRequests ?? DEFAULT_MAX_REQUESTS, CORE_REQUESTS);
  const cache = new Map<string, { report: Report; expiresAt: number }>();

  /** `project`: a channel's own project (`/agent project`); the configured one when unset. */
  async function build(range: DateRange, project?: string): Promise<Report> {
    const cacheKey = `${project ? `${project}|` : ''}${range.from}|${range.to}|${range.timeZone}`;
    const hit = cache.get(cacheKey);
    if (hit && hit.expiresAt > now()) {
      log.info({ range: cacheKey }, 'report.cache_hit');
      return hit.report;
    }
    const started = performance.now();
    let requests = 0;
    const fetchPage = (
      r: DateRange,
      offset: number,
      limit: number,
      optional: boolean,
    ): Promise<VisitorsPage> => {
      if (optional && requests >= maxRequests) throw new Stop('cap');
      requests++;
      const q = { ...apiParams(r), limit, offset, project };
      return deps.api.getVisitorsPage(q).catch((err: unknown) => {
        if (optional && err instanceof BudgetExhausted) throw new Stop('budget');
        throw err;
      });
    };

    const previous = previousRange(range);
    const first = await fetchPage(range, 0, PAGE_LIMIT, false);
    const previousTotals = (await fetchPage(previous, 0, 1, false)).totals;
    const points = await chartPoints(range, project, (r) => fetchPage(r, 0, 1, false));

    let stoppedBy: Report['scan']['stoppedBy'] = null;
    const scan = async (
      r: DateRange,
      firstPage: VisitorsPage | undefined,
    ): Promise<{ rows: PageRow[]; complete: boolean }> => {
      const rows: PageRow[] = [];
      let page = firstPage;
      let offset = 0;
      try {
        if (!page) page = await fetchPage(r, 0, PAGE_LIMIT, true);
        rows.push(...page.visitors);
        while (page.hasMore) {
          offset += PAGE_LIMIT;
          page = await fetchPage(r, offset, PAGE_LIMIT, true);
          rows.push(...page.visitors);
        }
        return { rows, complete: true };
      } catch (err) {
        if (!(err instanceof Stop)) throw err;
        stoppedBy ??= err.reason;
        return { rows, complete: false };
      }
    };
    const current = await scan(range, first);
    const before = await scan(previous, undefined);

    const rows = dedupeAndSort(current.rows);
    const previousRows = new Map(dedupeAndSort(before.rows).map((r) => [r.path, r]));
    const report: Report = {
      range,
      previous,
      totals: first.totals,
      previousTotals,
      changes: totalsChange(first.totals, previousTotals),
      points,
      rows,
      previousRows,
      top: rows.slice(0, TOP_PAGES),
      movers: movers(rows, previousRows, {
        ...DEFAULT_MOVERS,
        currentComplete: current.complete,
        previousComplete: before.complete,
      }),
      scan: {
        current: { paths: rows.length, complete: current.complete },
        previous: { paths: previousRows.size, complete: before.complete },
        requests,
        stoppedBy,
      },
      generatedAt: now(),
    };
    cache.set(cacheKey, { report, expiresAt: now() + CACHE_MS });
    log.info(
      {
        range: cacheKey,
        requests,
        paths: rows.length,
        complete: current.complete && before.complete,
        stoppedBy,
        durationMs: Math.round(performance.now() - started),
      },
      'report.built',
    );
    return report;
  }

  /**
   * One `limit=1` call per day (or week) gives its deduplicated totals. A closed day's
   * counts do not change, so they are kept for good; today's are always fetched.
   */
  async function chartPoints(
    range: DateRange,
    project: string | undefined,
    fetchTotals: (r: DateRange) => Promise<VisitorsPage>,
  ) {
    const today = todayIn(new Date(now()), range.timeZone);
    const buckets = chartBuckets(range);
    const out: (ChartBucket & Counts)[] = new Array(buckets.length);
    let next = 0;
    const worker = async () => {
      for (let i = next++; i < buckets.length; i = next++) {
        const b = buckets[i]!;
        const r: DateRange = { from: b.from, to: b.to, days: 0, timeZone: range.timeZone };
        const p = apiParams(r);
        // The configured project's points keep the keys they had before projects existed.
        const key = `${project ? `${project}|` : ''}${p.dateFrom}|${p.dateTo}`;
        const closed = b.to <= today;
        let counts = closed ? await deps.store.getVisitorPoint(key) : undefined;
        if (!counts) {
          counts = (await fetchTotals(r)).totals;
          if (closed) await deps.store.putVisitorPoint(key, counts, now());
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

  return { build };
}

export type ReportService = ReturnType<typeof createReportService>;
