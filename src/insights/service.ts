import { type Budget, HOUR_MS } from '../api/budget.ts';
import type { ApiWorkspace } from '../api/call.ts';
import { BudgetExhausted } from '../api/errors.ts';
import type { Conversation } from '../api/insights-schemas.ts';
import type { Logger } from '../log.ts';
import { apiParams, type DateRange, previousRange } from '../reports/range.ts';
import { inTurns } from '../reports/turns.ts';
import { type ScopeOf, singleScope } from '../store/scope.ts';
import type { Store, WorkspaceRef } from '../store/types.ts';
import {
  countsChange,
  DEFAULT_INSIGHTS,
  dislikedPages,
  type InsightOptions,
  questionGapSteps,
  searchGapSteps,
  topSearches,
} from './analyse.ts';
import type { InsightsCache } from './cache.ts';
import {
  type EmbeddingsDeps,
  textVectors,
  type VectorsOutcome,
  vectorCacheOf,
} from './embeddings.ts';
import { joinGapSteps } from './gaps.ts';
import { DEFAULT_INSIGHTS_MAX_REQUESTS, planRequests, type RequestPlan } from './plan.ts';
import { PlannedReader } from './read.ts';
import type { InsightsReport } from './report.ts';
import { type InsightsApi, readReport } from './sources.ts';
import type { GroupingOptions } from './topics.ts';

export type { InsightsReport } from './report.ts';

/** A period counts as closed (its data settled) this long after it ends. */
export const SETTLE_MS = 6 * 3_600_000;
const OPEN_CACHE_MS = 10 * 60_000;
/** A settled period is kept a little over a week: next week's report reads it as "previous". */
const CLOSED_CACHE_MS = 8 * 86_400_000;
const MAX_CACHED = 64;
/**
 * Joined gaps a report keeps (of any number): the listing shows the top few open ones, and
 * a drafted gap is looked up among all of them for "did it work?".
 */
export const GAPS_KEPT = 200;

export interface InsightsServiceDeps {
  api: InsightsApi;
  /** The shared analytics budget: the plan fits in what is left of it. */
  budget?: Pick<Budget, 'remaining' | 'status'> | undefined;
  /** Distributed mode: a workspace's organisation's budget, by its connected project. */
  budgetOf?: ((project: string) => Pick<Budget, 'remaining' | 'status'>) | undefined;
  log: Logger;
  maxRequests?: number;
  /** Where settled periods are kept beyond this process (the database); memory only without. */
  cache?: InsightsCache | undefined;
  options?: Partial<InsightOptions>;
  now?: () => number;
  /**
   * A team's embeddings endpoint and where vectors are kept (embeddings.ts, each workspace's
   * apart): questions are then grouped by meaning as well as words. Unset: by words alone.
   */
  embeddings?:
    | (Omit<EmbeddingsDeps, 'log' | 'cache'> & {
        cache?: Pick<Store, 'textVectors' | 'putTextVectors'> | undefined;
      })
    | undefined;
  /**
   * Whose cache and vectors a build's workspace reads and writes (src/store/scope.ts): the
   * single workspace's by default, the build's own team in distributed mode.
   */
  scope?: ScopeOf;
}

/** One build's own limits, within the service's (the digest's retries use them). */
export interface BuildOptions {
  /** At most this many requests, below the service's own cap. */
  maxRequests?: number;
  /** Gives one use per request before it is sent (a retry allowance); none left halts reading. */
  meter?: Pick<Budget, 'take'>;
  /** Each page is asked once, without the client's quick retries: the caller retries later. */
  singleAttempt?: boolean;
  /**
   * The workspace the report is for (the request's, the digest's): in distributed mode its
   * key and its organisation's budget; its cache and vectors in any mode (src/store/scope.ts).
   */
  workspace?: ApiWorkspace | undefined;
}

/** The plan did not fit: not enough requests left this hour (or a cap below the core). */
export class InsightsBudgetTooLow extends BudgetExhausted {
  constructor(need: number, allowance: number, retryAt: Date) {
    super('insights.plan', `The analytics budget (${allowance} left, ${need} needed)`, retryAt);
  }
}

/**
 * Builds insights reports for `/insights` and the digest, knowing nothing of Slack: plans
 * the requests (plan.ts), reads within the plan (read.ts), analyses (analyse.ts). Closed
 * periods are cached, and a closed period's counts serve as the next report's "previous".
 */
export function createInsightsService(deps: InsightsServiceDeps) {
  const log = deps.log.child({ component: 'insights' });
  const now = deps.now ?? Date.now;
  const cap = deps.maxRequests ?? DEFAULT_INSIGHTS_MAX_REQUESTS;
  const options = { ...DEFAULT_INSIGHTS, ...deps.options };
  const scopeOf = deps.scope ?? singleScope;
  /** Kept here by workspace and key; in the shared cache by key, under the workspace. */
  const reports = new Map<string, { report: InsightsReport; expiresAt: number }>();
  const keyOf = (r: DateRange, project: string | undefined) =>
    `${project ?? ''}|${r.from}|${r.to}|${r.timeZone}`;
  const isClosed = (r: DateRange) => Date.parse(apiParams(r).dateTo) + SETTLE_MS <= now();

  async function build(
    range: DateRange,
    project?: string,
    opts: BuildOptions = {},
  ): Promise<InsightsReport> {
    const ws = scopeOf(opts.workspace);
    const key = keyOf(range, project);
    const hit = await cached(ws, key);
    if (hit) {
      log.info({ range: key, from: hit.from }, 'insights.cache_hit');
      return { ...hit.report, requests: 0 };
    }
    const started = performance.now();
    const previous = previousRange(range);
    const cachedPrevious = (await cached(ws, keyOf(previous, project)))?.report.counts;
    const budget = (project !== undefined && deps.budgetOf?.(project)) || deps.budget;
    const plan = await makePlan(budget, cachedPrevious !== undefined, opts.maxRequests);
    const reader = new PlannedReader(plan, opts.meter);
    const periods = { range, previous, project };
    const read = await readReport(deps.api, reader, periods, cachedPrevious, {
      ...(opts.singleAttempt ? { retries: 0 } : {}),
      workspace: opts.workspace,
    });
    const embeddings = deps.embeddings && {
      ...deps.embeddings,
      cache: deps.embeddings.cache && vectorCacheOf(deps.embeddings.cache, ws),
      log,
    };
    const report = await analysed(read, options, embeddings, {
      range,
      previous,
      project,
      plan,
      reader,
      closed: isClosed(range),
      generatedAt: now(),
    });
    await remember(ws, key, report);
    log.info(
      {
        range: key,
        requests: reader.requests,
        planned: plan.total,
        stoppedBy: reader.stoppedBy,
        failed: failures(report),
        ctrUnit: read.current.ctrUnit,
        previousCached: cachedPrevious !== undefined,
        ...(report.semantic ? { embeddings: report.semantic } : {}),
        durationMs: Math.round(performance.now() - started),
      },
      'insights.built',
    );
    return report;
  }

  async function makePlan(
    budget: InsightsServiceDeps['budget'],
    previousCached: boolean,
    maxRequests?: number,
  ): Promise<RequestPlan> {
    const budgetLeft = budget ? await budget.remaining() : null;
    const planned = planRequests({
      cap: Math.min(cap, maxRequests ?? cap),
      budgetLeft,
      previousCached,
    });
    if (planned.ok) return planned.plan;
    // With none left the budget says when the next slot opens; with too few left it does not
    // say when enough will be, but within the hour's window every slot taken frees again.
    const next = budget ? (await budget.status()).nextSlotAt : null;
    log.warn({ need: planned.need, allowance: planned.allowance }, 'insights.budget_too_low');
    throw new InsightsBudgetTooLow(
      planned.need,
      planned.allowance,
      new Date(next ?? now() + HOUR_MS),
    );
  }

  /** A report kept in memory, or else in the shared cache (then kept in memory too). */
  async function cached(
    ws: WorkspaceRef,
    key: string,
  ): Promise<{ report: InsightsReport; from: 'memory' | 'store' } | undefined> {
    const hit = reports.get(memoryKey(ws, key));
    if (hit && hit.expiresAt > now()) return { report: hit.report, from: 'memory' };
    const stored = await deps.cache?.get(ws, key);
    if (!stored) return undefined;
    keep(memoryKey(ws, key), stored, now() + OPEN_CACHE_MS);
    return { report: stored, from: 'store' };
  }

  /**
   * Closed and fully read: kept for over a week, here and in the shared cache, and read as a
   * later report's "previous". One a failed page left partial: not kept (the next one asks
   * for what is missing). Anything else (one grouped by words because the embeddings
   * endpoint failed, too: the next one asks it again): kept here for minutes.
   */
  async function remember(ws: WorkspaceRef, key: string, report: InsightsReport): Promise<void> {
    if (report.stoppedBy === 'failed') return;
    const settled = report.closed && report.stoppedBy === null && !report.semantic?.failed;
    const expiresAt = now() + (settled ? CLOSED_CACHE_MS : OPEN_CACHE_MS);
    keep(memoryKey(ws, key), report, expiresAt);
    if (settled) await deps.cache?.put(ws, key, report, expiresAt);
  }

  function keep(key: string, report: InsightsReport, expiresAt: number): void {
    reports.delete(key);
    reports.set(key, { report, expiresAt });
    if (reports.size > MAX_CACHED) reports.delete(reports.keys().next().value!);
  }

  return { build };
}

export type InsightsService = ReturnType<typeof createInsightsService>;

const memoryKey = (ws: WorkspaceRef, key: string) => `${ws.teamId}#${key}`;

/** The report from what was read: gaps grouped, pages ranked, counts compared. */
async function analysed(
  read: Awaited<ReturnType<typeof readReport>>,
  options: InsightOptions,
  embeddings: EmbeddingsDeps | undefined,
  about: Pick<
    InsightsReport,
    'range' | 'previous' | 'project' | 'plan' | 'closed' | 'generatedAt'
  > & {
    reader: PlannedReader;
  },
): Promise<InsightsReport> {
  const { reader, ...rest } = about;
  const [current, before] = [read.current, read.previousCounts];
  const semantic = embeddings && (await questionVectors(current.conversations, embeddings));
  const questionGrouping = withVectors(options.grouping, semantic?.vectors);
  // Grouping thousands of questions is CPU work: in steps, so acks and answers go out.
  const asked = await inTurns(
    questionGapSteps(current.conversations, Number.POSITIVE_INFINITY, questionGrouping),
  );
  const searched = await inTurns(
    searchGapSteps(current.searches, { ...options, topN: Number.POSITIVE_INFINITY }),
  );
  // Pages ranked once: the gaps join any of them, the report lists the first few.
  const disliked = dislikedPages(current.byPage, current.feedback, { ...options, topN: GAPS_KEPT });
  // One item per need: questions, no-click searches and comments joined (gaps.ts).
  const gaps = await inTurns(
    joinGapSteps({
      questions: asked,
      searches: searched,
      rows: current.searches,
      unanswered: current.conversations.filter((c) => c.resolutionStatus === 'unanswered'),
      disliked,
      feedback: current.feedback,
      grouping: options.grouping,
    }),
  );
  return {
    ...rest,
    questionGaps: asked.slice(0, options.topN),
    searchGaps: searched.slice(0, options.topN),
    moreGaps: {
      questions: Math.max(0, asked.length - options.topN),
      searches: Math.max(0, searched.length - options.topN),
    },
    disliked: disliked.slice(0, options.topN),
    gaps: gaps.slice(0, GAPS_KEPT),
    gapsDropped: Math.max(0, gaps.length - GAPS_KEPT),
    topSearches: topSearches(current.searches, options.topN),
    counts: current.counts,
    feedbackPagesCut: current.byPageCut,
    previousCounts: before,
    changes: countsChange(current.counts, before),
    coverage: reader.coverage,
    requests: reader.requests,
    stoppedBy: reader.stoppedBy,
    ...(semantic ? { semantic: outcomeOf(semantic) } : {}),
  };
}

/** The grouping by meaning as well as words, when the endpoint gave vectors. */
const withVectors = (g: GroupingOptions, vectors: ReadonlyMap<string, Float32Array> | undefined) =>
  vectors ? { ...g, vectors: (t: string) => vectors.get(t) } : g;

/** What the report keeps of the vectors' outcome: not the vectors. */
const outcomeOf = ({ vectors: _, ...outcome }: VectorsOutcome) => outcome;

/**
 * The vectors of the unanswered questions (the texts grouped by meaning); search terms stay
 * lexical (they join from 0.55, which the meaning score, at most its weight, never reaches).
 */
function questionVectors(conversations: readonly Conversation[], embeddings: EmbeddingsDeps) {
  const texts = conversations
    .filter((c) => c.resolutionStatus === 'unanswered')
    .map((c) => c.query);
  return textVectors(texts, embeddings);
}

/** The sources whose next page failed, and how: for the log line of a partial report. */
function failures(report: InsightsReport) {
  const out: Record<string, unknown> = {};
  for (const [s, c] of Object.entries(report.coverage)) if (c.failed) out[s] = c.failed;
  return Object.keys(out).length > 0 ? out : undefined;
}
