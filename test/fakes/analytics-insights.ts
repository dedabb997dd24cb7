/**
 * The insight endpoints of the Analytics Export API, for the ApiEmulator: `/searches`,
 * `/assistant`, `/feedback`, `/feedback/by-page`, over the seeded data in
 * analytics-insights-seed.ts.
 *
 * From the official OpenAPI document (real behaviour): query `dateFrom`, `dateTo` (exclusive),
 * `limit` (searches 1..100 default 50, assistant 1..1000 default 100, feedback 1..100 default
 * 50, by-page 1..100 default 10), `cursor` (searches opaque; assistant a ULID; feedback a
 * string); by-page has no cursor; feedback filters `source` and `status` (comma-separated);
 * searches ordered by hits descending with `totalSearches` = sum of hits; 400 `{error, details}`.
 * Our assumptions (undocumented): the assistant cursor is the last id of the previous page,
 * conversations newest first; the searches and feedback cursors encode the offset and the
 * range, and a cursor from another range is 400; `ctr` is a fraction 0..1 (clicks / hits,
 * 3 decimals), or a percentage 0..100 (1 decimal) with `mix({ ctrUnit: 'percent' })`; by-page rows ordered by total descending, then path; missing dates default like
 * `/visitors` (the 30 days up to tomorrow).
 */

import type { InsightsMix } from './analytics-insights-hostile.ts';
import {
  type ConversationRow,
  type FeedbackRow,
  makeConversations,
  makeFeedback,
  makeSearches,
  type SearchAggregate,
  type SearchEvent,
} from './analytics-insights-records.ts';

export type { ConversationRow, FeedbackRow, SearchAggregate };

import { parseDate } from './api-emulator.ts';

export const INSIGHTS_KINDS = ['searches', 'assistant', 'feedback', 'feedbackByPage'] as const;
export type InsightsKind = (typeof INSIGHTS_KINDS)[number];
export const isInsightsKind = (k: unknown): k is InsightsKind =>
  (INSIGHTS_KINDS as readonly unknown[]).includes(k);

const DAY_MS = 86_400_000;
const LIMITS: Record<InsightsKind, { def: number; max: number }> = {
  searches: { def: 50, max: 100 },
  assistant: { def: 100, max: 1000 },
  feedback: { def: 50, max: 100 },
  feedbackByPage: { def: 10, max: 100 },
};
const ULID_RE = /^[0-9A-HJKMNP-TV-Z]{26}$/;

type Reply = { status: number; body: unknown };
type Range = { from: number; to: number };

export class InsightsData {
  private readonly now: () => number;
  private readonly seed: number;
  private mixed: InsightsMix = {};
  private cache:
    | { today: number; conv: ConversationRow[]; search: SearchEvent[]; fb: FeedbackRow[] }
    | undefined;

  constructor(now: () => number, seedValue = 7) {
    this.now = now;
    this.seed = seedValue;
  }

  /**
   * Adds what real readers bring (analytics-insights-hostile.ts): personal data in their
   * texts, typing prefixes among the searches, `ctr` in percent. Replaces the previous mix.
   */
  mix(mix: InsightsMix): void {
    this.mixed = { ...mix };
    this.cache = undefined;
  }

  /** Every conversation in [from, to) (instants), newest first: what the API pages through. */
  conversations(range?: Range): ConversationRow[] {
    const all = this.data().conv;
    return range ? all.filter((c) => inRange(Date.parse(c.timestamp), range)) : all;
  }

  /** The whole-range `/searches` answer, in service order, with `totalSearches`. */
  searches(range: Range): { rows: SearchAggregate[]; totalSearches: number } {
    const byTerm = new Map<string, SearchEvent[]>();
    for (const e of this.data().search) {
      if (inRange(e.at, range)) byTerm.set(e.term, [...(byTerm.get(e.term) ?? []), e]);
    }
    let totalSearches = 0;
    const rows = [...byTerm].map(([term, events]) => {
      const hits = events.reduce((n, e) => n + e.hits, 0);
      const clicks = events.reduce((n, e) => n + e.clicks, 0);
      totalSearches += hits;
      return {
        searchQuery: term,
        hits,
        ctr:
          this.mixed.ctrUnit === 'percent'
            ? Math.round((clicks / hits) * 1000) / 10
            : Math.round((clicks / hits) * 1000) / 1000,
        topClickedPage: clicks > 0 ? (events[0]?.page ?? null) : null,
        lastSearchedAt: new Date(Math.max(...events.map((e) => e.at))).toISOString(),
      };
    });
    rows.sort((a, b) => b.hits - a.hits || (a.searchQuery < b.searchQuery ? -1 : 1));
    return { rows, totalSearches };
  }

  /** Feedback entries in [from, to), newest first. */
  feedback(range?: Range): FeedbackRow[] {
    const all = this.data().fb;
    return range ? all.filter((f) => inRange(Date.parse(f.createdAt), range)) : all;
  }

  /** `/feedback/by-page` over the whole range, in service order. */
  byPage(rows: FeedbackRow[]) {
    const pages = new Map<
      string,
      { path: string; thumbsUp: number; thumbsDown: number; code: number; total: number }
    >();
    for (const f of rows) {
      const p = pages.get(f.path) ?? {
        path: f.path,
        thumbsUp: 0,
        thumbsDown: 0,
        code: 0,
        total: 0,
      };
      if (f.source === 'code_snippet') p.code++;
      else if (f.helpful) p.thumbsUp++;
      else p.thumbsDown++;
      p.total++;
      pages.set(f.path, p);
    }
    return [...pages.values()].sort((a, b) => b.total - a.total || (a.path < b.path ? -1 : 1));
  }

  answer(kind: InsightsKind, q: URLSearchParams): Reply {
    const details: { message: string }[] = [];
    const limit = parseLimit(q.get('limit'), LIMITS[kind], details);
    const range = parseRange(q.get('dateFrom'), q.get('dateTo'), this.now(), details);
    if (!range || details.length > 0) return invalid(details);
    if (kind === 'assistant') return this.assistantPage(range, limit, q.get('cursor'));
    const rows = kind === 'searches' ? null : this.filteredFeedback(range, q, details);
    if (details.length > 0) return invalid(details);
    if (kind === 'feedbackByPage') {
      const pages = this.byPage(rows ?? []);
      return {
        status: 200,
        body: { feedback: pages.slice(0, limit), hasMore: pages.length > limit },
      };
    }
    const rangeKey = `${range.from}:${range.to}`;
    const offset = readCursor(q.get('cursor'), rangeKey);
    if (offset === null) return invalid([{ message: 'Invalid cursor' }]);
    const next = (total: number) =>
      offset + limit < total ? encodeCursor(offset + limit, rangeKey) : null;
    if (kind === 'searches') {
      const s = this.searches(range);
      const searches = s.rows.slice(offset, offset + limit);
      return {
        status: 200,
        body: { searches, totalSearches: s.totalSearches, nextCursor: next(s.rows.length) },
      };
    }
    const list = rows ?? [];
    const nextCursor = next(list.length);
    return {
      status: 200,
      body: {
        feedback: list.slice(offset, offset + limit),
        nextCursor,
        hasMore: nextCursor !== null,
      },
    };
  }

  private assistantPage(range: Range, limit: number, cursor: string | null): Reply {
    const rows = this.conversations(range);
    let start = 0;
    if (cursor !== null) {
      const i = ULID_RE.test(cursor) ? rows.findIndex((c) => c.id === cursor) : -1;
      if (i < 0) return invalid([{ message: 'cursor must be a ULID from a previous page' }]);
      start = i + 1;
    }
    const conversations = rows.slice(start, start + limit);
    const hasMore = start + limit < rows.length;
    const nextCursor = hasMore ? (conversations.at(-1)?.id ?? null) : null;
    return { status: 200, body: { conversations, nextCursor, hasMore } };
  }

  private filteredFeedback(range: Range, q: URLSearchParams, details: { message: string }[]) {
    const source = q.get('source');
    const sources = ['code_snippet', 'contextual', 'agent', 'thumbs_only'];
    if (source !== null && !sources.includes(source))
      details.push({ message: `source must be one of ${sources.join(', ')}` });
    const statuses = q.get('status')?.split(',').filter(Boolean);
    return this.feedback(range).filter(
      (f) => (source === null || f.source === source) && (!statuses || statuses.includes(f.status)),
    );
  }

  private data() {
    const today = Math.floor(this.now() / DAY_MS);
    if (this.cache?.today !== today) {
      const now = this.now();
      this.cache = {
        today,
        conv: makeConversations(now, this.seed, this.mixed),
        search: makeSearches(now, this.seed, this.mixed),
        fb: makeFeedback(now, this.seed, this.mixed),
      };
    }
    return this.cache;
  }
}

/** What `wrongShape` sends instead of a real answer. */
export function insightsWrongShape(kind: InsightsKind): unknown {
  if (kind === 'searches') return { searches: [{ searchQuery: 3, hits: '12' }], totalSearches: -1 };
  if (kind === 'assistant')
    return { conversations: [{ id: 1, resolutionStatus: 'maybe' }], hasMore: 'no' };
  return { feedback: {}, hasMore: null };
}

const inRange = (ms: number, r: Range) => ms >= r.from && ms < r.to;

function invalid(details: { message: string }[]): Reply {
  return { status: 400, body: { error: 'Invalid query parameters', details } };
}

function parseLimit(
  s: string | null,
  l: { def: number; max: number },
  details: { message: string }[],
): number {
  if (s === null) return l.def;
  const n = Number(s);
  if (Number.isFinite(n) && n >= 1 && n <= l.max) return Math.floor(n);
  details.push({ message: `limit must be a number between 1 and ${l.max}` });
  return l.def;
}

function parseRange(
  dateFrom: string | null,
  dateTo: string | null,
  now: number,
  details: { message: string }[],
): Range | null {
  const to = dateTo === null ? (Math.floor(now / DAY_MS) + 1) * DAY_MS : parseDate(dateTo);
  const from =
    dateFrom === null && to !== null
      ? to - 30 * DAY_MS
      : dateFrom === null
        ? null
        : parseDate(dateFrom);
  if (to === null) details.push({ message: 'dateTo must be a date (YYYY-MM-DD or ISO 8601)' });
  if (from === null) details.push({ message: 'dateFrom must be a date (YYYY-MM-DD or ISO 8601)' });
  if (from === null || to === null) return null;
  if (from >= to) details.push({ message: 'dateFrom must be before dateTo' });
  return { from, to };
}

function encodeCursor(offset: number, rangeKey: string): string {
  return Buffer.from(JSON.stringify({ o: offset, r: rangeKey })).toString('base64url');
}

/** The offset a cursor stands for; 0 without one; null when it is not ours or for another range. */
function readCursor(cursor: string | null, rangeKey: string): number | null {
  if (cursor === null) return 0;
  try {
    const c = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as {
      o?: unknown;
      r?: unknown;
    };
    return typeof c.o === 'number' && Number.isInteger(c.o) && c.o > 0 && c.r === rangeKey
      ? c.o
      : null;
  } catch {
    return null;
  }
}
