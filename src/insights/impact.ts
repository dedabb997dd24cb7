import { apiParams, type DateRange } from '../reports/range.ts';
import type { GapBefore } from './evidence.ts';
import type { GapItem } from './gaps.ts';

/**
 * "Did it work?" for a gap whose job opened a pull request: how often the need was met
 * before (the counts of the report it was drafted from, kept with the gap) and since the
 * pull request (this report's data, from the pull request or the period's start, whichever
 * is later, to the period's end). Pure.
 *
 * - Questions are counted by when each was asked: exact.
 * - Searches come as totals per period, so they are counted when the whole period is after
 *   the pull request, or as none when the need's latest search was before it; otherwise
 *   they are not split (`null`: said so).
 * - A need not among this report's gaps was not asked unanswered nor searched without a
 *   click since: 0 and 0.
 */

const DAY_MS = 86_400_000;

export interface Impact {
  prAt: number;
  before: GapBefore | undefined;
  /** Undefined when this report's period ended before the pull request. */
  since:
    | {
        /** From when (epoch ms) and for how many days (rounded, at least 0). */
        from: number;
        days: number;
        asked: number;
        /** More may have been asked than counted: the report keeps the latest questions. */
        askedAtLeast: boolean;
        searched: number | null;
      }
    | undefined;
}

export function impactOf(
  prAt: number,
  before: GapBefore | undefined,
  item: GapItem | undefined,
  range: DateRange,
): Impact {
  const p = apiParams(range);
  const [periodStart, periodEnd] = [Date.parse(p.dateFrom), Date.parse(p.dateTo)];
  if (periodEnd <= prAt) return { prAt, before, since: undefined };
  const from = Math.max(prAt, periodStart);
  const days = Math.max(0, Math.round((periodEnd - from) / DAY_MS));
  if (!item)
    return { prAt, before, since: { from, days, asked: 0, askedAtLeast: false, searched: 0 } };
  const asked = item.askedAt.filter((t) => t >= from).length;
  const cut = item.asked > item.askedAt.length && (item.askedAt[0] ?? 0) >= from;
  return {
    prAt,
    before,
    since: {
      from,
      days,
      asked,
      askedAtLeast: cut,
      searched: searchedSince(item, prAt, periodStart),
    },
  };
}

function searchedSince(item: GapItem, prAt: number, periodStart: number): number | null {
  if (item.searched === 0) return 0;
  if (periodStart >= prAt) return item.searched;
  const last = item.searchedLastAt ? Date.parse(item.searchedLastAt) : Number.NaN;
  if (Number.isFinite(last) && last < prAt) return 0;
  return null;
}
