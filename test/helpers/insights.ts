import type { Conversation } from '../../src/api/insights-schemas.ts';

/** An assistant conversation the docs could not answer, as the analytics export gives it. */
export function unanswered(
  query: string,
  o: { id: string; timestamp: string; pageUrl?: string | null },
): Conversation {
  return {
    id: o.id,
    timestamp: o.timestamp,
    query,
    response: '',
    responseType: 'answer',
    sources: [],
    resolutionStatus: 'unanswered',
    queryCategory: null,
    pageUrl: o.pageUrl ?? null,
  };
}
