import type { PageRow } from '../api/schemas.ts';
import type { Counts } from '../store/types.ts';
import { drain, eachStep, type Steps, sortSteps } from './turns.ts';

/**
 * Pure arithmetic of a traffic report. The API documents no row order, and offset paging
 * over a shifting order can repeat or skip rows, so rows are deduplicated by path and
 * sorted here: total desc, then human desc, then path.
 */

export type { PageRow };

export function compareRows(a: PageRow, b: PageRow): number {
  return b.total - a.total || b.human - a.human || (a.path < b.path ? -1 : a.path > b.path ? 1 : 0);
}

/** First sighting of a path wins: a repeat from a shifted page is the same row again. */
export function dedupeAndSort(rows: Iterable<PageRow>): PageRow[] {
  return drain(dedupeAndSortSteps(rows));
}

/** `dedupeAndSort` in steps (src/reports/turns.ts). */
export function* dedupeAndSortSteps(rows: Iterable<PageRow>): Steps<PageRow[]> {
  const byPath = new Map<string, PageRow>();
  yield* eachStep(rows, (r) => {
    if (!byPath.has(r.path)) byPath.set(r.path, r);
  });
  return yield* sortSteps([...byPath.values()], compareRows);
}

/** Rows by path, in steps. */
export function* byPathSteps(rows: readonly PageRow[]): Steps<Map<string, PageRow>> {
  const byPath = new Map<string, PageRow>();
  yield* eachStep(rows, (r) => byPath.set(r.path, r));
  return byPath;
}

export interface Change {
  current: number;
  previous: number;
  abs: number;
  /** null when the previous value was 0 ("new"). */
  pct: number | null;
}

export function change(current: number, previous: number): Change {
  const abs = current - previous;
  return { current, previous, abs, pct: previous === 0 ? null : (abs / previous) * 100 };
}

export function totalsChange(current: Counts, previous: Counts): Record<keyof Counts, Change> {
  return {
    human: change(current.human, previous.human),
    ai: change(current.ai, previous.ai),
    total: change(current.total, previous.total),
  };
}

export interface Mover extends Change {
  path: string;
}

export interface MoverOptions {
  /** A page must reach this many visitors in one of the two periods to count (noise floor). */
  floor: number;
  /** And move by at least this many. */
  minAbs: number;
  limit: number;
  /** Pages not scanned in a period are unknown there, not zero. */
  currentComplete: boolean;
  previousComplete: boolean;
}

export const DEFAULT_MOVERS: Omit<MoverOptions, 'currentComplete' | 'previousComplete'> = {
  floor: 20,
  minAbs: 5,
  limit: 5,
};

/**
 * Biggest risers and fallers by absolute change in total visitors. A page missing from a
 * period counts as 0 only when that period was scanned completely; otherwise it is left
 * out rather than reported as a jump it may not be.
 */
export function movers(
  current: readonly PageRow[],
  previous: ReadonlyMap<string, PageRow>,
  opts: MoverOptions,
): { up: Mover[]; down: Mover[] } {
  return drain(moversSteps(current, previous, opts));
}

/** `movers` in steps (src/reports/turns.ts). */
export function* moversSteps(
  current: readonly PageRow[],
  previous: ReadonlyMap<string, PageRow>,
  opts: MoverOptions,
): Steps<{ up: Mover[]; down: Mover[] }> {
  const up: Mover[] = [];
  const down: Mover[] = [];
  const consider = (path: string, m: Change) => {
    if (Math.max(m.current, m.previous) < opts.floor || Math.abs(m.abs) < opts.minAbs) return;
    (m.abs > 0 ? up : down).push({ path, ...m });
  };
  const seen = new Set<string>();
  yield* eachStep(current, (row) => {
    seen.add(row.path);
    const prev = previous.get(row.path);
    if (prev || opts.previousComplete) consider(row.path, change(row.total, prev?.total ?? 0));
  });
  if (opts.currentComplete) {
    yield* eachStep(previous.values(), (prev) => {
      if (!seen.has(prev.path)) consider(prev.path, change(0, prev.total));
    });
  }
  const byPath = (a: Mover, b: Mover) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0);
  const risers = yield* sortSteps(up, (a, b) => b.abs - a.abs || byPath(a, b));
  const fallers = yield* sortSteps(down, (a, b) => a.abs - b.abs || byPath(a, b));
  return { up: risers.slice(0, opts.limit), down: fallers.slice(0, opts.limit) };
}
