import { BudgetExhausted } from '../api/errors.ts';
import type { RequestPlan, Source } from './plan.ts';

/** How far one source was read. */
export interface Coverage {
  planned: number;
  pages: number;
  /** The service said there was nothing more. */
  complete: boolean;
}

export type StopReason = 'cap' | 'budget';

/** One source's page reader: `next` gives the cursor of the page after, null at the end. */
export interface Pager<P> {
  fetch(cursor: string | null): Promise<P>;
  next(page: P): string | null;
}

/**
 * Reads pages within a plan, counting every request, resuming each source where it left
 * off (so core pages can go first and extras after). A `required` first page must arrive:
 * its errors propagate (no half report passed off as whole). Any later page that meets an
 * exhausted budget (another report took the slots meanwhile) halts every source; the report
 * then says `budget`. A source left with more to read when its planned pages ran out says
 * why the plan was short (`cap` or `budget`).
 */
export class PlannedReader {
  readonly coverage = {} as Record<Source, Coverage>;
  /** Requests sent (one refused by the budget before sending is not one). */
  requests = 0;
  #halted = false;
  #haltedBy: StopReason | null = null;
  readonly #plan: RequestPlan;
  readonly #state = new Map<Source, { cursor: string | null; pages: unknown[] }>();

  constructor(plan: RequestPlan) {
    this.#plan = plan;
    for (const [s, planned] of Object.entries(plan.pages) as [Source, number][]) {
      this.coverage[s] = { planned, pages: 0, complete: false };
    }
  }

  /**
   * Why the report is short of what it wanted, if it is: halted on the budget, or a source
   * left unfinished with fewer pages than it wanted (the cap or the budget shrank its plan).
   * A source that read all the pages it ever wants (its ceiling, plan.ts MAX_PAGES) is as
   * read as a report reads it: that is no early stop (notes.ts says it apart).
   */
  get stoppedBy(): StopReason | null {
    if (this.#haltedBy) return this.#haltedBy;
    const short = (Object.entries(this.coverage) as [Source, Coverage][]).some(
      ([s, c]) => !c.complete && c.pages < this.#plan.wanted[s],
    );
    return short ? (this.#plan.limitedBy ?? 'cap') : null;
  }

  /** Reads `source` on, up to `upTo` more pages within its plan; returns all its pages so far. */
  async read<P>(
    source: Source,
    pager: Pager<P>,
    opts: { required?: boolean; upTo?: number } = {},
  ): Promise<P[]> {
    const cov = this.coverage[source];
    const st = this.#state.get(source) ?? { cursor: null, pages: [] };
    this.#state.set(source, st);
    const stopAt = Math.min(cov.planned, cov.pages + (opts.upTo ?? Number.POSITIVE_INFINITY));
    while (!cov.complete && !this.#halted && cov.pages < stopAt) {
      const required = opts.required === true && cov.pages === 0;
      this.requests++;
      let page: P;
      try {
        page = await pager.fetch(st.cursor);
      } catch (err) {
        if (err instanceof BudgetExhausted) this.requests--; // refused before it was sent
        if (required || !(err instanceof BudgetExhausted)) throw err;
        this.#halted = true;
        this.#haltedBy = 'budget';
        break;
      }
      cov.pages++;
      st.pages.push(page);
      st.cursor = pager.next(page);
      if (st.cursor === null) cov.complete = true;
    }
    return st.pages as P[];
  }
}
