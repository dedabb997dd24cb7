import type { z } from 'zod';

export type {
  AssistantPage,
  FeedbackByPage,
  FeedbackPage,
  SearchesPage,
} from './insights-schemas.ts';

import {
  AssistantPage,
  FeedbackByPage,
  FeedbackPage,
  type FeedbackSource,
  SearchesPage,
} from './insights-schemas.ts';

/**
 * The insight reads of the Analytics Export API, as plain descriptions (operation, path,
 * query, schema) that `ApiClient` sends with the analytics budget. Pagination (OpenAPI):
 * `/searches`, `/assistant` and `/feedback` page with an opaque `cursor` (`nextCursor`, null
 * at the end); `/feedback/by-page` has neither cursor nor offset, only `limit` (≤ 100).
 */

export interface InsightsQuery {
  /** The configured project when unset. */
  project?: string | undefined;
  /** YYYY-MM-DD or ISO 8601; `dateTo` is exclusive. */
  dateFrom: string;
  dateTo: string;
  limit: number;
  cursor?: string | null | undefined;
}

export interface FeedbackQuery extends InsightsQuery {
  source?: FeedbackSource | undefined;
  /** e.g. `['pending', 'in_progress']`, sent comma-separated. */
  status?: readonly string[] | undefined;
}

/** Largest page each endpoint accepts (OpenAPI `maximum`). */
export const MAX_LIMIT = { searches: 100, assistant: 1000, feedback: 100, feedbackByPage: 100 };

export interface AnalyticsRead<S extends z.ZodType> {
  operation: string;
  path: string;
  query: Record<string, string | number>;
  schema: S;
}

function base(q: InsightsQuery): Record<string, string | number> {
  const query: Record<string, string | number> = {
    dateFrom: q.dateFrom,
    dateTo: q.dateTo,
    limit: q.limit,
  };
  if (q.cursor) query.cursor = q.cursor;
  return query;
}

const path = (project: string, tail: string) =>
  `/v1/analytics/${encodeURIComponent(project)}/${tail}`;

export function searchesRead(
  project: string,
  q: InsightsQuery,
): AnalyticsRead<typeof SearchesPage> {
  return {
    operation: 'searches.get',
    path: path(project, 'searches'),
    query: base(q),
    schema: SearchesPage,
  };
}

export function assistantRead(
  project: string,
  q: InsightsQuery,
): AnalyticsRead<typeof AssistantPage> {
  return {
    operation: 'assistant.get',
    path: path(project, 'assistant'),
    query: base(q),
    schema: AssistantPage,
  };
}

function feedbackFilters(q: FeedbackQuery, query: Record<string, string | number>) {
  if (q.source) query.source = q.source;
  if (q.status && q.status.length > 0) query.status = q.status.join(',');
  return query;
}

export function feedbackRead(
  project: string,
  q: FeedbackQuery,
): AnalyticsRead<typeof FeedbackPage> {
  return {
    operation: 'feedback.get',
    path: path(project, 'feedback'),
    query: feedbackFilters(q, base(q)),
    schema: FeedbackPage,
  };
}

export function feedbackByPageRead(
  project: string,
  q: Omit<FeedbackQuery, 'cursor'>,
): AnalyticsRead<typeof FeedbackByPage> {
  const { cursor: _, ...query } = base(q);
  return {
    operation: 'feedback.by_page',
    path: path(project, 'feedback/by-page'),
    query: feedbackFilters(q, query),
    schema: FeedbackByPage,
  };
}
