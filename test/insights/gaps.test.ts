import { describe, expect, it } from 'vitest';
import type { Conversation, FeedbackEntry, SearchRow } from '../../src/api/insights-schemas.ts';
import {
  DEFAULT_INSIGHTS,
  dislikedPages,
  questionGaps,
  searchGaps,
} from '../../src/insights/analyse.ts';
import { joinGaps } from '../../src/insights/gaps.ts';
import { DEFAULT_GROUPING, type GroupingOptions } from '../../src/insights/topics.ts';
import { unanswered } from '../helpers/insights.ts';

const conv = (query: string, i: number, pageUrl: string | null = null): Conversation =>
  unanswered(query, {
    id: `c${i}`,
    timestamp: `2026-11-${String(10 + (i % 10)).padStart(2, '0')}T10:00:00Z`,
    pageUrl,
  });
const row = (searchQuery: string, hits: number, ctr = 0): SearchRow => ({
  searchQuery,
  hits,
  ctr,
  topClickedPage: ctr > 0 ? '/x' : null,
  lastSearchedAt: '2026-11-17T12:00:00Z',
});
const entry = (
  path: string,
  comment: string | null,
  status: FeedbackEntry['status'] = 'pending',
  n = 0,
): FeedbackEntry => ({
  id: `${path}-${n}-${comment}`,
  path,
  comment,
  createdAt: `2026-11-1${n % 10}T00:00:00Z`,
  source: 'contextual',
  status,
  helpful: false,
});

function join(o: {
  questions?: Conversation[];
  rows?: SearchRow[];
  feedback?: FeedbackEntry[];
  byPage?: { path: string; thumbsDown: number; thumbsUp: number }[];
  grouping?: GroupingOptions;
}) {
  const questions = o.questions ?? [];
  const rows = o.rows ?? [];
  const feedback = o.feedback ?? [];
  const pages = (o.byPage ?? []).map((p) => ({ ...p, code: 0, total: p.thumbsDown + p.thumbsUp }));
  const all = { ...DEFAULT_INSIGHTS, topN: Number.POSITIVE_INFINITY };
  return joinGaps({
    questions: questionGaps(questions, Number.POSITIVE_INFINITY, o.grouping),
    searches: searchGaps(rows, all),
    rows,
    unanswered: questions,
    disliked: dislikedPages(pages, feedback, all),
    feedback,
    grouping: o.grouping,
  });
}

const ROTATE = [
  'How do I rotate API keys?',
  'rotating api keys',
  'API key rotation',
  'Rotate API key',
];

describe('one need, one item', () => {
  it('joins the questions, the searches nobody followed and the comments on one need', () => {
    const items = join({
      questions: [
        ...ROTATE.map((q, i) => conv(q, i, 'https://docs.acme.com/guides/authentication')),
        conv('How do I delete an API key?', 10),
        conv('How to set up Okta SSO', 11),
      ],
      rows: [row('rotate api key', 40), row('okta', 12, 0.02), row('delete api key', 6)],
      feedback: [
        entry('/guides/authentication', 'Nothing about rotating keys', 'pending', 1),
        entry('/guides/authentication', 'nothing  about rotating KEYS', 'pending', 2),
        entry('/guides/authentication', 'The API key page is wrong', 'pending', 3),
      ],
      byPage: [{ path: '/guides/authentication', thumbsDown: 5, thumbsUp: 1 }],
    });
    const rotate = items.find((i) => i.asked === 4);
    expect(ROTATE).toContain(rotate?.title);
    expect(rotate).toMatchObject({
      kind: 'question',
      asked: 4,
      searched: 40,
      ctr: 0,
      pages: [{ path: '/guides/authentication', count: 4 }],
      comments: [
        { path: '/guides/authentication', text: 'nothing  about rotating KEYS', count: 2 },
      ],
    });
    expect(rotate?.searches.map((s) => s.text)).toEqual(['rotate api key']);
    expect(rotate?.signatures).toEqual(['key rotat']);
    expect(rotate?.askedAt).toHaveLength(4);
    expect(rotate?.weight).toBe(4 + 40 + 2);
    // A search whose words are all in a question topic's joins it ("okta" → Okta SSO).
    const sso = items.find((i) => i.title === 'How to set up Okta SSO');
    expect(sso?.searches.map((s) => s.text)).toEqual(['okta']);
    // Deleting a key is not rotating one: its search joins the delete question, not rotation.
    const del = items.find((i) => i.title === 'How do I delete an API key?');
    expect(del?.searches.map((s) => s.text)).toEqual(['delete api key']);
    // A comment sharing only the common words stays with its page, which stays an item.
    const page = items.find((i) => i.kind === 'page');
    expect(page?.comments.map((c) => c.text)).toEqual(['The API key page is wrong']);
    expect(items.map((i) => i.kind).sort()).toEqual(['page', 'question', 'question', 'question']);
  });

  it('keeps an unmatched search and comment their own items, and a page whose comments all joined is none', () => {
    const items = join({
      questions: [conv('webhook retry policy', 1)],
      rows: [row('webhook retries', 9), row('pricing', 30)],
      feedback: [
        entry('/webhooks', 'no word on webhook retry', 'pending', 1),
        entry('/pricing', 'too vague', 'pending', 2),
      ],
      byPage: [
        { path: '/webhooks', thumbsDown: 3, thumbsUp: 0 },
        { path: '/pricing', thumbsDown: 2, thumbsUp: 0 },
      ],
    });
    expect(items.map((i) => `${i.kind}:${i.title}`)).toEqual([
      'search:pricing',
      'question:webhook retry policy',
      'page:/pricing',
    ]);
    expect(items[1]).toMatchObject({
      searched: 9,
      comments: [{ text: 'no word on webhook retry' }],
    });
    expect(items[2]?.key).toBe('page:/pricing');
  });

  it("reads comments with the team's synonyms (INSIGHTS_SYNONYMS), as it reads questions", () => {
    const run = (grouping: GroupingOptions) =>
      join({
        questions: [conv('How do I rotate API keys?', 1), conv('rotate api key', 2)],
        feedback: [entry('/keys', 'Rien sur la rotation des clés', 'pending', 1)],
        byPage: [{ path: '/keys', thumbsDown: 3, thumbsUp: 0 }],
        grouping,
      });
    const withGlossary = run({ ...DEFAULT_GROUPING, synonyms: [['key', 'clé']] });
    expect(withGlossary.map((i) => i.kind)).toEqual(['question']);
    expect(withGlossary[0]?.comments.map((c) => c.text)).toEqual(['Rien sur la rotation des clés']);
    // Without the glossary, `clés` is not `key`: the comment stays with its page.
    const without = run(DEFAULT_GROUPING);
    expect(without.map((i) => i.kind)).toEqual(['page', 'question']);
    expect(without[1]?.comments).toEqual([]);
  });

  it('leaves out feedback the team marked resolved or dismissed, comments and thumbs down', () => {
    const feedback = [
      entry('/a', 'Nothing about rotating keys', 'resolved', 1),
      entry('/a', 'still broken', 'dismissed', 2),
      entry('/a', 'missing the limits', 'pending', 3),
    ];
    const items = join({
      questions: ROTATE.map((q, i) => conv(q, i)),
      feedback,
      byPage: [{ path: '/a', thumbsDown: 3, thumbsUp: 0 }],
    });
    expect(items.find((i) => i.kind === 'question')?.comments).toEqual([]);
    // 3 thumbs down, 2 of them handled: under the 2 a page needs to be listed.
    expect(items.find((i) => i.kind === 'page')).toBeUndefined();
    const pages = dislikedPages(
      [{ path: '/a', thumbsDown: 4, thumbsUp: 0, code: 0, total: 4 }],
      feedback,
      DEFAULT_INSIGHTS,
    );
    expect(pages[0]).toMatchObject({ thumbsDown: 2, comments: [{ text: 'missing the limits' }] });
  });

  it('ranks by readers who met the need, then the most recent, never by wording', () => {
    const items = join({
      questions: [conv('zebra crossing', 1), conv('aardvark burrow', 5)],
    });
    // Both met once: the later one first, though its words sort last.
    expect(items.map((i) => i.title)).toEqual(['aardvark burrow', 'zebra crossing']);
  });
});
