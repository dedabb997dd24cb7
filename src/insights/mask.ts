import type {
  AssistantPage,
  FeedbackByPage,
  FeedbackEntry,
  FeedbackPage,
  PageFeedback,
  SearchesPage,
} from '../api/insights-schemas.ts';
import { redactPii } from '../redact-pii.ts';

/**
 * Every page the insights sources read, with the text readers wrote masked (src/redact-pii.ts)
 * as it is parsed: search terms and the pages they clicked, questions and the page they were
 * asked from, feedback comments and paths, and any other text a feedback entry carries (a
 * code snippet's code and file name). Everything after this point (grouping, reports, the
 * digest, Draft it's button values, form and prompt, the cache) only ever holds masked text.
 *
 * Left as read: ids, timestamps, enums, counts, the assistant's own answer and its sources
 * (the docs' words, never shown), and the service's query category.
 */

const mask = (s: string) => redactPii(s);
const maskOrNull = (s: string | null) => (s === null ? null : redactPii(s));

export function maskSearchesPage(page: SearchesPage): SearchesPage {
  return {
    ...page,
    searches: page.searches.map((r) => ({
      ...r,
      searchQuery: mask(r.searchQuery),
      topClickedPage: maskOrNull(r.topClickedPage),
    })),
  };
}

export function maskAssistantPage(page: AssistantPage): AssistantPage {
  return {
    ...page,
    conversations: page.conversations.map((c) => ({
      ...c,
      query: mask(c.query),
      pageUrl: maskOrNull(c.pageUrl),
    })),
  };
}

/** Fields of a feedback entry that are never reader text. */
const FEEDBACK_DATA = new Set(['id', 'createdAt', 'source', 'status', 'helpful']);

export function maskFeedbackEntry(entry: FeedbackEntry): FeedbackEntry {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(entry)) {
    out[k] = typeof v === 'string' && !FEEDBACK_DATA.has(k) ? mask(v) : v;
  }
  return out as FeedbackEntry;
}

export function maskFeedbackPage(page: FeedbackPage): FeedbackPage {
  return { ...page, feedback: page.feedback.map(maskFeedbackEntry) };
}

export function maskByPage(page: FeedbackByPage): FeedbackByPage {
  return { ...page, feedback: page.feedback.map((p) => ({ ...p, path: mask(p.path) })) };
}

/**
 * Pages whose paths read the same once masked (`/reset?token=a` and `/reset?token=b` are
 * both `/reset?token=[secret]`) as one, their votes added, in the order of the first.
 */
export function samePathsMerged(pages: readonly PageFeedback[]): PageFeedback[] {
  const byPath = new Map<string, PageFeedback>();
  for (const p of pages) {
    const seen = byPath.get(p.path);
    if (!seen) byPath.set(p.path, { ...p });
    else for (const k of ['thumbsUp', 'thumbsDown', 'code', 'total'] as const) seen[k] += p[k];
  }
  return [...byPath.values()];
}
