import type { ApiClient } from '../api/client.ts';
import type {
  AssistantPage,
  Conversation,
  FeedbackByPage,
  FeedbackEntry,
  FeedbackPage,
  PageFeedback,
  SearchesPage,
  SearchRow,
} from '../api/insights-schemas.ts';
import { apiParams, type DateRange } from '../reports/range.ts';
import type { PeriodCounts } from './analyse.ts';
import { PAGE_SIZE, type Source } from './plan.ts';
import type { Pager, PlannedReader } from './read.ts';

export type InsightsApi = Pick<
  ApiClient,
  'getSearchesPage' | 'getAssistantPage' | 'getFeedbackPage' | 'getFeedbackByPage'
>;

type Pagers = {
  searches: Pager<SearchesPage>;
  assistant: Pager<AssistantPage>;
  byPage: Pager<FeedbackByPage>;
  feedback: Pager<FeedbackPage>;
};

/** The four endpoints for one period; `previous` picks the previous period's page sizes. */
export function pagers(
  api: InsightsApi,
  range: DateRange,
  project: string | undefined,
  previous: boolean,
): Pagers {
  const q = { ...apiParams(range), project };
  const size = (s: 'searches' | 'assistant' | 'byPage' | 'feedback') =>
    PAGE_SIZE[(previous ? `previous${s[0]!.toUpperCase()}${s.slice(1)}` : s) as Source] ??
    PAGE_SIZE[s];
  return {
    searches: {
      fetch: (cursor) => api.getSearchesPage({ ...q, limit: size('searches'), cursor }),
      // The previous period's one row is read for its `totalSearches` alone.
      next: (p) => (previous ? null : p.nextCursor),
    },
    assistant: {
      fetch: (cursor) => api.getAssistantPage({ ...q, limit: size('assistant'), cursor }),
      next: (p) => (p.hasMore ? p.nextCursor : null),
    },
    byPage: {
      fetch: () => api.getFeedbackByPage({ ...q, limit: size('byPage') }),
      next: () => null,
    },
    feedback: {
      // Page-level votes and their comments only; code-snippet feedback is not about pages.
      fetch: (cursor) =>
        api.getFeedbackPage({ ...q, limit: size('feedback'), cursor, source: 'contextual' }),
      next: (p) => (p.hasMore ? p.nextCursor : null),
    },
  };
}

export interface PeriodData {
  searches: SearchRow[];
  conversations: Conversation[];
  byPage: PageFeedback[];
  /** `/feedback/by-page` had more pages than its one answer holds (it has no pagination). */
  byPageCut: boolean;
  feedback: FeedbackEntry[];
  counts: PeriodCounts;
}

/**
 * Reads a report's pages in plan order (plan.ts): the core first pages, the previous
 * period's totals, then the extras. `cachedPrevious`: that closed period's counts, known.
 */
export async function readReport(
  api: InsightsApi,
  reader: PlannedReader,
  periods: { range: DateRange; previous: DateRange; project: string | undefined },
  cachedPrevious: PeriodCounts | undefined,
): Promise<{ current: PeriodData; previousCounts: PeriodCounts | undefined }> {
  const cur = pagers(api, periods.range, periods.project, false);
  const prev = pagers(api, periods.previous, periods.project, true);
  await reader.read('searches', cur.searches, { required: true, upTo: 1 });
  await reader.read('assistant', cur.assistant, { required: true, upTo: 1 });
  await reader.read('byPage', cur.byPage, { required: true });
  const prevSearches = await reader.read('previousSearches', prev.searches);
  const prevByPage = await reader.read('previousByPage', prev.byPage);
  const current = {
    assistant: await reader.read('assistant', cur.assistant),
    feedback: await reader.read('feedback', cur.feedback),
    searches: await reader.read('searches', cur.searches),
    byPage: await reader.read('byPage', cur.byPage),
  };
  const prevAssistant = await reader.read('previousAssistant', prev.assistant);
  const data = periodData(current, reader.coverage.assistant.complete);
  if (cachedPrevious) return { current: data, previousCounts: cachedPrevious };
  if (prevSearches.length === 0) return { current: data, previousCounts: undefined };
  const before = periodData(
    { searches: prevSearches, assistant: prevAssistant, byPage: prevByPage, feedback: [] },
    reader.coverage.previousAssistant.complete,
  );
  return { current: data, previousCounts: before.counts };
}

/** What the pages read of one period say, and which counts are whole. */
export function periodData(
  pages: {
    searches: SearchesPage[];
    assistant: AssistantPage[];
    byPage: FeedbackByPage[];
    feedback: FeedbackPage[];
  },
  assistantWhole: boolean,
): PeriodData {
  const conversations = pages.assistant.flatMap((p) => p.conversations);
  const byPage = pages.byPage.flatMap((p) => p.feedback);
  const byPageCut = pages.byPage.some((p) => p.hasMore);
  return {
    searches: pages.searches.flatMap((p) => p.searches),
    conversations,
    byPage,
    byPageCut,
    feedback: pages.feedback.flatMap((p) => p.feedback),
    counts: {
      searches: pages.searches[0]?.totalSearches ?? 0,
      questions: assistantWhole ? conversations.length : null,
      unanswered: assistantWhole
        ? conversations.filter((c) => c.resolutionStatus === 'unanswered').length
        : null,
      thumbsDown:
        byPageCut || pages.byPage.length === 0
          ? null
          : byPage.reduce((n, p) => n + p.thumbsDown, 0),
    },
  };
}
