import type { SearchRow } from '../api/insights-schemas.ts';
import type { DateRange } from '../reports/range.ts';
import type { Change, DislikedPage, PeriodCounts, SearchGap } from './analyse.ts';
import type { VectorsOutcome } from './embeddings.ts';
import type { GapItem } from './gaps.ts';
import type { RequestPlan, Source } from './plan.ts';
import type { Coverage, StopReason } from './read.ts';
import type { Topic } from './topics.ts';

/** What `/insights` and the digest's insights section show, as the service builds it. */
export interface InsightsReport {
  range: DateRange;
  previous: DateRange;
  project: string | undefined;
  /** Unanswered assistant questions, grouped (topics.ts). */
  questionGaps: Topic[];
  searchGaps: SearchGap[];
  /** Gap topics past the top N, not listed: the report says how many. */
  moreGaps: { questions: number; searches: number };
  disliked: DislikedPage[];
  /**
   * One item per need (gaps.ts): a question topic with its searches and comments, or a search
   * or a disliked page alone; ranked, the first `GAPS_KEPT`.
   */
  gaps: GapItem[];
  /** Items past the first `GAPS_KEPT`, not kept (each met by as few readers as the last kept). */
  gapsDropped?: number;
  topSearches: SearchRow[];
  counts: PeriodCounts;
  /** `/feedback/by-page` answered only its first 100 pages (it has no pagination). */
  feedbackPagesCut: boolean;
  previousCounts: PeriodCounts | undefined;
  changes: Partial<Record<keyof PeriodCounts, Change>>;
  plan: RequestPlan;
  coverage: Record<Source, Coverage>;
  /** Requests sent for this report (0 when it came from a cache). */
  requests: number;
  /** Why reading stopped before the service said "no more", if it did. */
  stoppedBy: StopReason | null;
  /**
   * With a team's embeddings endpoint: the model, the questions' texts, how many vectors the
   * cache had, the requests sent, and why none came when the endpoint failed (the questions
   * were then grouped by their words, and notes.ts says so).
   */
  semantic?: Omit<VectorsOutcome, 'vectors'>;
  /** The period had settled when built: cached for long, its counts reused as a "previous". */
  closed: boolean;
  generatedAt: number;
}
