/**
 * The request plan of an insights report, made before any request is sent.
 *
 * Every analytics request (every page of every endpoint, `/visitors` included) spends one of
 * the organisation's 100 an hour. A report gets `min(per-report cap, budget left now)` and
 * spends it in this order:
 *
 * 1. Core, 3 requests, or no report: the first page of `/searches` (100 terms by hits, and
 *    `totalSearches`), of `/assistant` (1,000 turns) and `/feedback/by-page` (100 pages).
 * 2. The previous period, 2 requests, for the comparison: `/searches?limit=1` (its
 *    `totalSearches`) and `/feedback/by-page`; skipped when that closed period is cached.
 * 3. Extras, one page at a time in this order until the allowance or each source's ceiling
 *    is reached: assistant, feedback (latest comments), searches, previous assistant, …
 *
 * Cursor pages are read only while the service says there are more, so a small site spends
 * less than planned; the plan is a ceiling, never a target.
 */

export const SOURCES = [
  'searches',
  'assistant',
  'byPage',
  'feedback',
  'previousSearches',
  'previousByPage',
  'previousAssistant',
] as const;
export type Source = (typeof SOURCES)[number];

export const CORE: readonly Source[] = ['searches', 'assistant', 'byPage'];
export const COMPARISON: readonly Source[] = ['previousSearches', 'previousByPage'];
/** Page sizes: the largest each endpoint accepts, except the previous totals (one row). */
export const PAGE_SIZE: Record<Source, number> = {
  searches: 100,
  assistant: 1000,
  byPage: 100,
  feedback: 100,
  previousSearches: 1,
  previousByPage: 100,
  previousAssistant: 1000,
};
/** Most pages of each source one report reads (by-page has no pagination at all). */
export const MAX_PAGES: Record<Source, number> = {
  searches: 3,
  assistant: 5,
  byPage: 1,
  feedback: 2,
  previousSearches: 1,
  previousByPage: 1,
  previousAssistant: 5,
};
const EXTRA_ORDER: readonly Source[] = ['assistant', 'feedback', 'searches', 'previousAssistant'];

/** Default per-report cap: a fifth of the hourly analytics budget. */
export const DEFAULT_INSIGHTS_MAX_REQUESTS = 20;

export interface RequestPlan {
  /** Pages planned per source (a ceiling). */
  pages: Record<Source, number>;
  /** Pages each source would get with no cap and a full budget (0: not needed). */
  wanted: Record<Source, number>;
  total: number;
  /** min(cap, budget left) when planned. */
  allowance: number;
  cap: number;
  budgetLeft: number | null;
  /** What kept the plan below every source's ceiling, if anything did. */
  limitedBy: 'cap' | 'budget' | null;
  /** The previous period's counts were cached: no comparison requests. */
  previousCached: boolean;
}

export type PlanResult =
  | { ok: true; plan: RequestPlan }
  | { ok: false; need: number; allowance: number; limitedBy: 'cap' | 'budget' };

export function planRequests(opts: {
  cap: number;
  /** Analytics requests left this hour; null when no budget is tracked. */
  budgetLeft: number | null;
  previousCached: boolean;
}): PlanResult {
  const allowance = Math.min(opts.cap, opts.budgetLeft ?? Number.POSITIVE_INFINITY);
  const limitedBy = opts.budgetLeft !== null && opts.budgetLeft < opts.cap ? 'budget' : 'cap';
  if (allowance < CORE.length) {
    return { ok: false, need: CORE.length, allowance, limitedBy };
  }
  const pages = Object.fromEntries(SOURCES.map((s) => [s, 0])) as Record<Source, number>;
  const compare = !opts.previousCached && allowance >= CORE.length + COMPARISON.length;
  // Without the previous totals there is nothing to compare the previous questions with.
  const ceiling = (s: Source) => (s.startsWith('previous') && !compare ? 0 : MAX_PAGES[s]);
  let total = 0;
  const take = (s: Source) => {
    if (total >= allowance || pages[s] >= ceiling(s)) return false;
    pages[s]++;
    total++;
    return true;
  };
  for (const s of CORE) take(s);
  if (compare) for (const s of COMPARISON) take(s);
  for (let progress = true; progress; ) {
    progress = false;
    for (const s of EXTRA_ORDER) progress = take(s) || progress;
  }
  const full =
    (compare || opts.previousCached) && EXTRA_ORDER.every((s) => pages[s] === ceiling(s));
  return {
    ok: true,
    plan: {
      pages,
      wanted: Object.fromEntries(
        SOURCES.map((s) => [s, opts.previousCached && s.startsWith('previous') ? 0 : MAX_PAGES[s]]),
      ) as Record<Source, number>,
      total,
      allowance,
      cap: opts.cap,
      budgetLeft: opts.budgetLeft,
      limitedBy: full ? null : limitedBy,
      previousCached: opts.previousCached,
    },
  };
}
