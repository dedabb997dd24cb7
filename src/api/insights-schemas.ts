import { z } from 'zod';

/**
 * Response schemas of the Analytics Export API's insight endpoints (`/searches`, `/assistant`,
 * `/feedback`, `/feedback/by-page`), from the official OpenAPI document. Counts are declared
 * `number` there; we require non-negative numbers. Fields we do not read stay loose
 * (`sources` items, code-snippet fields) so that an addition on their side breaks nothing.
 */

const Count = z.number().nonnegative();
const Cursor = z.string().min(1).nullable();

export const SearchRow = z.object({
  searchQuery: z.string(),
  hits: Count,
  /** Click-through rate; we read it as a fraction 0..1 (the document does not say which). */
  ctr: Count,
  topClickedPage: z.string().nullable(),
  lastSearchedAt: z.string(),
});
export type SearchRow = z.infer<typeof SearchRow>;

export const SearchesPage = z.object({
  searches: z.array(SearchRow),
  /** Search events in the range: the sum of all hits, not distinct queries. */
  totalSearches: z.number().int().nonnegative(),
  nextCursor: Cursor,
});
export type SearchesPage = z.infer<typeof SearchesPage>;

export const RESOLUTION_STATUSES = ['answered', 'unanswered'] as const;

export const Conversation = z.object({
  id: z.string().min(1),
  timestamp: z.string(),
  query: z.string(),
  response: z.string(),
  /** Absent means `answer` (OpenAPI). */
  responseType: z.enum(['answer', 'clarifying_question']).default('answer'),
  sources: z.array(z.object({ title: z.string(), url: z.string() }).loose()),
  resolutionStatus: z.enum(RESOLUTION_STATUSES),
  queryCategory: z.string().nullable(),
  pageUrl: z.string().nullable(),
});
export type Conversation = z.infer<typeof Conversation>;

export const AssistantPage = z.object({
  conversations: z.array(Conversation),
  nextCursor: Cursor,
  hasMore: z.boolean(),
});
export type AssistantPage = z.infer<typeof AssistantPage>;

export const FEEDBACK_SOURCES = ['code_snippet', 'contextual', 'agent', 'thumbs_only'] as const;
export type FeedbackSource = (typeof FEEDBACK_SOURCES)[number];
export const FEEDBACK_STATUSES = ['pending', 'in_progress', 'resolved', 'dismissed'] as const;

/** The three `anyOf` variants share these fields; `helpful` is only on contextual entries. */
export const FeedbackEntry = z
  .object({
    id: z.string().min(1),
    path: z.string(),
    comment: z.string().nullable(),
    createdAt: z.string().nullable(),
    source: z.enum(FEEDBACK_SOURCES),
    status: z.enum(FEEDBACK_STATUSES),
    helpful: z.boolean().optional(),
  })
  .loose();
export type FeedbackEntry = z.infer<typeof FeedbackEntry>;

export const FeedbackPage = z.object({
  feedback: z.array(FeedbackEntry),
  nextCursor: Cursor,
  hasMore: z.boolean(),
});
export type FeedbackPage = z.infer<typeof FeedbackPage>;

export const PageFeedback = z.object({
  path: z.string(),
  thumbsUp: Count,
  thumbsDown: Count,
  code: Count,
  total: Count,
});
export type PageFeedback = z.infer<typeof PageFeedback>;

/** No cursor and no offset in the document: only the first `limit` (≤ 100) pages can be read. */
export const FeedbackByPage = z.object({
  feedback: z.array(PageFeedback),
  hasMore: z.boolean(),
});
export type FeedbackByPage = z.infer<typeof FeedbackByPage>;
