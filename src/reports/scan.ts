import type { PageRow, VisitorsPage } from '../api/schemas.ts';
import { PAGE_LIMIT } from './limits.ts';
import type { DateRange } from './range.ts';

/** Thrown by a fetch that may not be sent: the per-report cap, or the hourly budget. */
export class Stop extends Error {
  readonly reason: 'cap' | 'budget';
  constructor(reason: 'cap' | 'budget') {
    super(reason);
    this.reason = reason;
  }
}

export interface PeriodScan {
  rows: PageRow[];
  complete: boolean;
}

interface Cursor extends PeriodScan {
  range: DateRange;
  offset: number;
}

/**
 * Pages through both periods from their first pages (already fetched), taking turns, the
 * current period first. The API's row order has nothing to do with the counts, so a
 * period's top pages are only known once it is scanned to the end; when the cap or budget
 * cannot cover both, taking turns scans them to the same depth, so that movers still come
 * from pages seen in both periods instead of the previous period being left unscanned.
 */
export async function scanBothPeriods(
  fetchMore: (r: DateRange, offset: number) => Promise<VisitorsPage>,
  periods: [DateRange, VisitorsPage][],
): Promise<{ scans: PeriodScan[]; stoppedBy: 'cap' | 'budget' | null }> {
  const cursors: Cursor[] = periods.map(([range, first]) => ({
    range,
    offset: 0,
    rows: [...first.visitors],
    complete: !first.hasMore,
  }));
  let stoppedBy: 'cap' | 'budget' | null = null;
  try {
    for (let turn = 0; cursors.some((c) => !c.complete); turn++) {
      const c = cursors[turn % cursors.length]!;
      if (c.complete) continue;
      const offset = c.offset + PAGE_LIMIT;
      const page = await fetchMore(c.range, offset);
      c.offset = offset;
      c.rows.push(...page.visitors);
      c.complete = !page.hasMore;
    }
  } catch (err) {
    if (!(err instanceof Stop)) throw err;
    stoppedBy = err.reason;
  }
  return { scans: cursors.map(({ rows, complete }) => ({ rows, complete })), stoppedBy };
}
