import type { ApiClient, ApiWorkspace } from '../api/client.ts';
import { BudgetExhausted } from '../api/errors.ts';
import type { PageRow, VisitorsPage } from '../api/schemas.ts';
import type { Logger } from '../log.ts';
import { type ScopeOf, singleScope } from '../store/scope.ts';
import type { Counts, Store } from '../store/types.ts';
import {
  byPathSteps,
  type Change,
  DEFAULT_MOVERS,
  dedupeAndSortSteps,
  type Mover,
  moversSteps,
  totalsChange,
} from './aggregate.ts';
import { CORE_REQUESTS, DEFAULT_MAX_REQUESTS, PAGE_LIMIT } from './limits.ts';
import { type ChartPointCounts, chartPoints } from './points.ts';
import { apiParams, type DateRange, previousRange } from './range.ts';
import { type PeriodScan, Stop, scanBothPeriods } from './scan.ts';
import { inTurns } from './turns.ts';

const CACHE_MS = 10 * 60_000;
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
  points: ChartPointCounts[];
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
  /**
   * Whose chart points a build's workspace reads and writes (src/store/scope.ts): the single
   * workspace's by default, the build's own team in distributed mode.
   */
  scope?: ScopeOf;
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
  const scopeOf = deps.scope ?? singleScope;
  const maxRequests = Math.max(deps.maxRequests ?? DEFAULT_MAX_REQUESTS, CORE_REQUESTS);
  const cache = new Map<string, { report: Report; expiresAt: number }>();

  /**
   * `project`: a channel's own project (`/agent project`); the configured one when unset.
   * `workspace`: distributed mode's workspace the report is for (its key, its budget; a
   * report built for one is never another's).
   */
  async function build(
    range: DateRange,
    project?: string,
    workspace?: ApiWorkspace,
  ): Promise<Report> {
    const scope = workspace?.teamId ? `${workspace.teamId}#` : '';
    const cacheKey = `${scope}${project ? `${project}|` : ''}${range.from}|${range.to}|${range.timeZone}`;
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
      const q = { ...apiParams(r), limit, offset, project, workspace };
      return deps.api.getVisitorsPage(q).catch((err: unknown) => {
        if (optional && err instanceof BudgetExhausted) throw new Stop('budget');
        throw err;
      });
    };

    const previous = previousRange(range);
    // Each period's first page carries its totals: no separate `limit=1` call for them.
    const first = await fetchPage(range, 0, PAGE_LIMIT, false);
    const previousFirst = await fetchPage(previous, 0, PAGE_LIMIT, false);
    const previousTotals = previousFirst.totals;
    const points = await chartPoints({
      range,
      project,
      ws: scopeOf(workspace),
      store: deps.store,
      now,
      fetchTotals: (r) => fetchPage(r, 0, 1, false),
    });
    const scanned = await scanBothPeriods(
      (r, offset) => fetchPage(r, offset, PAGE_LIMIT, true),
      [
        [range, first],
        [previous, previousFirst],
      ],
    );
    const [current, before] = scanned.scans as [PeriodScan, PeriodScan];
    const stoppedBy = scanned.stoppedBy;

    // 50,000 pages take a few hundred ms of CPU: in steps, so acks and answers go between.
    const rows = await inTurns(dedupeAndSortSteps(current.rows));
    const previousRows = await inTurns(byPathSteps(await inTurns(dedupeAndSortSteps(before.rows))));
    const moved = await inTurns(
      moversSteps(rows, previousRows, {
        ...DEFAULT_MOVERS,
        currentComplete: current.complete,
        previousComplete: before.complete,
      }),
    );
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
      movers: moved,
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

  return { build };
}

export type ReportService = ReturnType<typeof createReportService>;
