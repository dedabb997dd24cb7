import type { ApiClient, ReadOptions } from '../api/client.ts';
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
import {
  maskAssistantPage,
  maskByPage,
  maskFeedbackPage,
  maskSearchesPage,
  samePathsMerged,
} from './mask.ts';
import { PAGE_SIZE, type Source } from './plan.ts';
import type { Pager, PlannedReader } from './read.ts';
import {
  type CtrUnit,
  ctrAsFraction,
  foldTypingPrefixes,
  mergeSameQueries,
} from './search-rows.ts';

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

/**
 * The four endpoints for one period; `previous` picks the previous period's page sizes.
 * Every page is masked as it arrives (mask.ts): nothing after this holds a reader's address,
 * key or phone number. `read`: the client's limits for each page (one attempt, for a caller
 * that retries on its own schedule).
 */
export function pagers(
  api: InsightsApi,
  range: DateRange,
  project: string | undefined,
  previous: boolean,
  read: ReadOptions = {},
): Pagers {
  const q = { ...apiParams(range), project };
  const size = (s: 'searches' | 'assistant' | 'byPage' | 'feedback') =>
    PAGE_SIZE[(previous ? `previous${s[0]!.toUpperCase()}${s.slice(1)}` : s) as Source] ??
    PAGE_SIZE[s];
  return {
    searches: {
      fetch: async (cursor) =>
        maskSearchesPage(
          await api.getSearchesPage({ ...q, limit: size('searches'), cursor }, read),
        ),
      // The previous period's one row is read for its `totalSearches` alone.
      next: (p) => (previous ? null : p.nextCursor),
    },
    assistant: {
      fetch: async (cursor) =>
        maskAssistantPage(
          await api.getAssistantPage({ ...q, limit: size('assistant'), cursor }, read),
        ),
      next: (p) => (p.hasMore ? p.nextCursor : null),
    },
    byPage: {
      fetch: async () =>
        maskByPage(await api.getFeedbackByPage({ ...q, limit: size('byPage') }, read)),
      next: () => null,
    },
    feedback: {
      // Page-level votes and their comments only; code-snippet feedback is not about pages.
      fetch: async (cursor) =>
        maskFeedbackPage(
          await api.getFeedbackPage(
            { ...q, limit: size('feedback'), cursor, source: 'contextual' },
            read,
          ),
        ),
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
  /** The unit `/searches` sent `ctr` in, read from the data (search-rows.ts). */
  ctrUnit: CtrUnit;
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
  read: ReadOptions = {},
): Promise<{ current: PeriodData; previousCounts: PeriodCounts | undefined }> {
  const cur = pagers(api, periods.range, periods.project, false, read);
  const prev = pagers(api, periods.previous, periods.project, true, read);
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

/**
 * What the pages read of one period say, and which counts are whole. The search rows are
 * read as search-rows.ts says: `ctr` as a fraction whatever its unit, rows that read the same
 * (two masked addresses) as one, typing prefixes folded into the query they grew into
 * (`totalSearches` is the service's and stays as sent); pages whose masked paths are the
 * same as one.
 */
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
  const byPage = samePathsMerged(pages.byPage.flatMap((p) => p.feedback));
  const byPageCut = pages.byPage.some((p) => p.hasMore);
  const searches = ctrAsFraction(pages.searches.flatMap((p) => p.searches));
  return {
    searches: foldTypingPrefixes(mergeSameQueries(searches.rows)),
    ctrUnit: searches.unit,
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
