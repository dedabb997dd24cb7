import { describe, expect, it } from 'vitest';
import type { FeedbackEntry, SearchRow } from '../../src/api/insights-schemas.ts';
import {
  countsChange,
  DEFAULT_INSIGHTS,
  dislikedPages,
  questionGaps,
  searchGaps,
  topSearches,
} from '../../src/insights/analyse.ts';

const search = (
  searchQuery: string,
  hits: number,
  ctr: number,
  page: string | null,
): SearchRow => ({
  searchQuery,
  hits,
  ctr,
  topClickedPage: page,
  lastSearchedAt: '2026-11-20T12:00:00Z',
});

describe('content gaps', () => {
  it('groups only unanswered questions', () => {
    const conv = (query: string, answered: boolean) => ({
      id: query,
      timestamp: '2026-11-20T10:00:00Z',
      query,
      response: '',
      responseType: 'answer' as const,
      sources: [],
      resolutionStatus: answered ? ('answered' as const) : ('unanswered' as const),
      queryCategory: null,
      pageUrl: null,
    });
    const gaps = questionGaps(
      [conv('rotate api key', false), conv('API key rotation', false), conv('install', true)],
      5,
    );
    expect(gaps).toHaveLength(1);
    expect(gaps[0]?.count).toBe(2);
  });

  it('finds searches with many hits and no or very few clicks, grouped', () => {
    const gaps = searchGaps(
      [
        search('quickstart', 120, 0.8, '/quickstart'),
        search('rotate api key', 40, 0, null),
        search('api key rotation', 10, 0.1, null), // no clicked page at all: counts
        search('okta', 25, 0.04, '/guides/authentication'),
        search('sso', 4, 0, null), // too few hits
        search('webhooks', 30, 0.06, '/webhooks'), // CTR above 5 %
      ],
      DEFAULT_INSIGHTS,
    );
    expect(gaps.map((g) => [g.topic.example, g.hits, g.noClicks])).toEqual([
      ['rotate api key', 50, true],
      ['okta', 25, false],
    ]);
    expect(gaps[0]?.ctr).toBeCloseTo(0.02);
  });
});

describe('top searches and disliked pages', () => {
  it('ranks searches by hits, then term', () => {
    const rows = [search('b', 5, 0.5, null), search('a', 5, 0.5, null), search('c', 9, 0, null)];
    expect(topSearches(rows, 2).map((r) => r.searchQuery)).toEqual(['c', 'a']);
  });

  it('ranks pages by thumbs down, then share, with their latest negative comments', () => {
    const entry = (
      id: string,
      path: string,
      helpful: boolean,
      comment: string | null,
      at: string,
    ): FeedbackEntry => ({
      id,
      path,
      comment,
      createdAt: at,
      source: 'contextual',
      status: 'pending',
      helpful,
    });
    const pages = [
      { path: '/a', thumbsUp: 10, thumbsDown: 4, code: 0, total: 14 },
      { path: '/b', thumbsUp: 0, thumbsDown: 4, code: 0, total: 4 },
      { path: '/c', thumbsUp: 0, thumbsDown: 1, code: 0, total: 1 },
    ];
    const entries = [
      entry('1', '/b', false, 'old', '2026-11-01T00:00:00Z'),
      entry('2', '/b', false, 'new <!channel>', '2026-11-09T00:00:00Z'),
      entry('3', '/b', true, 'love it', '2026-11-10T00:00:00Z'),
      entry('4', '/b', false, '   ', '2026-11-11T00:00:00Z'),
      entry('5', '/b', false, 'Old ', '2026-11-02T00:00:00Z'),
      entry('6', '/b', false, 'old', '2026-10-30T00:00:00Z'),
    ];
    const out = dislikedPages(pages, entries, { ...DEFAULT_INSIGHTS, comments: 2 });
    expect(out.map((p) => [p.path, p.thumbsDown, p.downShare])).toEqual([
      ['/b', 4, 1],
      ['/a', 4, 4 / 14],
    ]);
    // The same comment from three readers is listed once, newest wording, with its count.
    expect(out[0]?.comments.map((c) => [c.text, c.count])).toEqual([
      ['new <!channel>', 1],
      ['Old', 3],
    ]);
  });
});

describe('counts against the previous period', () => {
  it('compares what both periods counted in full, and nothing without a previous', () => {
    const cur = { searches: 150, questions: 40, unanswered: 10, thumbsDown: null };
    const prev = { searches: 100, questions: 0, unanswered: 5, thumbsDown: 3 };
    const c = countsChange(cur, prev);
    expect(c.searches).toEqual({ current: 150, previous: 100, abs: 50, pct: 50 });
    expect(c.questions?.pct).toBeNull(); // from zero: "new"
    expect(c.thumbsDown).toBeUndefined();
    expect(countsChange(cur, undefined)).toEqual({});
  });
});
