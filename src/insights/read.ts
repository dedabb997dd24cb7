import type { Budget, BudgetSlot } from '../api/budget.ts';
import { ApiError, type ApiErrorKind, BudgetExhausted } from '../api/errors.ts';
import type { RequestPlan, Source } from './plan.ts';

/** How far one source was read. */
export interface Coverage {
  planned: number;
  pages: number;
  /** The service said there was nothing more. */
  complete: boolean;
  /** Its next page failed (after the client's own retries): why, for the report's note. */
  failed?: { kind: ApiErrorKind; status?: number | undefined };
}

/** `failed`: an optional page failed, and the report holds what was read before it. */
export type StopReason = 'cap' | 'budget' | 'failed';

/**
 * Failures that say the service as a whole is struggling or refusing us for now: after one,
 * no other page is asked (each would wait out the same retries and fail the same way).
 * Any other failure (an answer that could not be read, a refused cursor) ends its source.
 */
const SERVICE_WIDE: ReadonlySet<ApiErrorKind> = new Set(['rate_limited', 'unavailable', 'timeout']);

/** One source's page reader: `next` gives the cursor of the page after, null at the end. */
export interface Pager<P> {
  fetch(cursor: string | null): Promise<P>;
  next(page: P): string | null;
}

/**
 * Reads pages within a plan, counting every request, resuming each source where it left
 * off (so core pages can go first and extras after). A `required` first page must arrive:
 * its errors propagate (no half report passed off as whole). Any later page is optional:
 * one that meets an exhausted budget (another report took the slots meanwhile) halts every
 * source, and the report says `budget`; one that fails (a 429, a 503, a timeout, an answer
 * that cannot be read) is noted on its source, ends it (a rate limit, an outage or a timeout
 * ends every source: SERVICE_WIDE), and the report, built from what was read, says `failed`.
 * A source left with more to read when its planned pages ran out says why the plan was
 * short (`cap` or `budget`). A `meter` (a retry allowance) gives one use per request before
 * it is sent; when it has none left, that is an exhausted budget like any other.
 */
export class PlannedReader {
  readonly coverage = {} as Record<Source, Coverage>;
  /** Requests sent (one refused by the budget before sending is not one). */
  requests = 0;
  #halted = false;
  #haltedBy: StopReason | null = null;
  readonly #plan: RequestPlan;
  readonly #meter: Pick<Budget, 'take'> | undefined;
  readonly #state = new Map<Source, { cursor: string | null; pages: unknown[] }>();

  constructor(plan: RequestPlan, meter?: Pick<Budget, 'take'>) {
    this.#plan = plan;
    this.#meter = meter;
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
    if (Object.values(this.coverage).some((c) => c.failed)) return 'failed';
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
    while (!cov.complete && !cov.failed && !this.#halted && cov.pages < stopAt) {
      const required = opts.required === true && cov.pages === 0;
      this.requests++;
      let page: P;
      let slot: BudgetSlot | undefined;
      try {
        slot = await this.#meter?.take(`insights.${source}`);
        page = await pager.fetch(st.cursor);
      } catch (err) {
        if (err instanceof BudgetExhausted) {
          this.requests--; // refused before it was sent
          await slot?.release().catch(() => {});
        }
        if (required || !this.#optionalFailure(cov, err)) throw err;
        break;
      }
      cov.pages++;
      st.pages.push(page);
      st.cursor = pager.next(page);
      if (st.cursor === null) cov.complete = true;
    }
    return st.pages as P[];
  }

  /** Notes an optional page's failure; false for what must propagate (a stop, a bug). */
  #optionalFailure(cov: Coverage, err: unknown): boolean {
    if (err instanceof BudgetExhausted) {
      this.#halted = true;
      this.#haltedBy = 'budget';
      return true;
    }
    if (!(err instanceof ApiError) || err.kind === 'stopped') return false;
    cov.failed = { kind: err.kind, status: err.status };
    if (SERVICE_WIDE.has(err.kind)) {
      this.#halted = true;
      this.#haltedBy = 'failed';
    }
    return true;
  }
}
