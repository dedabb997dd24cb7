/**
 * The records behind the emulator's insight endpoints, made from analytics-insights-seed.ts:
 * a pure function of (now, seed), so the same clock gives the same answers.
 */

import type { HostileGap, InsightsMix } from './analytics-insights-hostile.ts';
import * as hostile from './analytics-insights-hostile.ts';
import * as seed from './analytics-insights-seed.ts';
import { hash3 } from './api-emulator.ts';

const DAY_MS = 86_400_000;
const HISTORY_DAYS = 120;
const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

export interface ConversationRow {
  id: string;
  timestamp: string;
  query: string;
  response: string;
  responseType: 'answer' | 'clarifying_question';
  sources: { title: string; url: string }[];
  resolutionStatus: 'answered' | 'unanswered';
  queryCategory: string | null;
  pageUrl: string | null;
}
export interface SearchAggregate {
  searchQuery: string;
  hits: number;
  ctr: number;
  topClickedPage: string | null;
  lastSearchedAt: string;
}
export interface FeedbackRow {
  id: string;
  path: string;
  comment: string | null;
  createdAt: string;
  source: 'contextual' | 'code_snippet';
  status: 'pending' | 'resolved';
  helpful?: boolean;
  code?: string;
  filename?: string | null;
  lang?: string | null;
}
export interface SearchEvent {
  term: string;
  at: number;
  hits: number;
  clicks: number;
  page: string | null;
}

/** A ULID-shaped id: 10 chars of time, 16 of hash, so ids sort like their timestamps. */
function ulid(ms: number, a: number, b: number): string {
  let out = '';
  for (let i = 9, t = ms; i >= 0; i--, t = Math.floor(t / 32)) out = CROCKFORD[t % 32] + out;
  for (let i = 0; i < 16; i++) out += CROCKFORD[hash3(a, b, i) % 32];
  return out;
}

function dayRecords<T>(now: number, perDay: (day: number, dayStart: number) => T[]): T[] {
  const today = Math.floor(now / DAY_MS);
  const out: T[] = [];
  for (let day = today - HISTORY_DAYS; day <= today; day++) out.push(...perDay(day, day * DAY_MS));
  return out;
}

export function makeConversations(
  now: number,
  s: number,
  mix: InsightsMix = {},
): ConversationRow[] {
  const today = Math.floor(now / DAY_MS);
  const row = (
    at: number,
    query: string,
    i: number,
    answered: boolean,
    page: string | null,
    category: string | null,
  ): ConversationRow => ({
    id: ulid(at, s, i),
    timestamp: new Date(at).toISOString(),
    query,
    response: answered ? `See ${page}.` : 'I could not find this in the documentation.',
    responseType: !answered || i % 11 ? 'answer' : 'clarifying_question',
    sources: answered && page ? [{ title: page, url: `https://docs.acme.com${page}` }] : [],
    resolutionStatus: answered ? 'answered' : 'unanswered',
    queryCategory: category,
    pageUrl: i % 3 === 0 ? null : `https://docs.acme.com${page ?? '/'}`,
  });
  const seeded: HostileGap[] = [
    ...seed.seededGaps(),
    ...(mix.pii ? hostile.PII_GAPS : []),
    ...(mix.paraphrases ? hostile.PARAPHRASE_GAPS : []),
  ];
  const gaps = seeded.map((g, i) => {
    const r = row(
      (today - g.daysAgo) * DAY_MS + 36_000_000 + i * 60_000,
      g.query,
      -1 - i,
      false,
      g.page ?? null,
      g.category,
    );
    return g.pageUrl ? { ...r, pageUrl: g.pageUrl } : r;
  });
  const answered = dayRecords(now, (day, start) =>
    seed.ANSWERED_QUESTIONS.flatMap((a, t) =>
      Array.from({ length: hash3(s, t, day) % 4 }, (_, k) => {
        const at = start + (hash3(s, t * 8 + k, day) % DAY_MS);
        return row(at, a.query, day * 1000 + t * 8 + k, true, a.page, null);
      }),
    ),
  );
  return [...gaps, ...answered]
    .filter((c) => Date.parse(c.timestamp) < now)
    .sort((a, b) => (a.id < b.id ? 1 : -1));
}

export function makeSearches(now: number, s: number, mix: InsightsMix = {}): SearchEvent[] {
  const terms: seed.SearchTerm[] = [
    ...seed.SEARCH_TERMS,
    ...(mix.pii ? hostile.PII_SEARCH_TERMS : []),
    ...(mix.typingPrefixes ? [...hostile.TYPED_TERMS, ...hostile.SHORT_TERMS] : []),
  ];
  const typed = new Map(
    (mix.typingPrefixes ? hostile.TYPED_TERMS : []).map((t) => [t.term, t.prefixes]),
  );
  // Clicks follow the running hit count, so a low CTR still yields a click now and then.
  const seen = new Map<string, number>();
  const clicksOf = (term: string, hits: number, ctr: number) => {
    const before = seen.get(term) ?? 0;
    seen.set(term, before + hits);
    return Math.floor((before + hits) * ctr) - Math.floor(before * ctr);
  };
  return dayRecords(now, (day, start) => {
    const at = start + 43_200_000;
    if (at >= now) return [];
    const main = terms.flatMap((t, i) => {
      const hits = t.lo + (hash3(s, i, day) % (t.hi - t.lo + 1));
      // What a search-as-you-type box logged on the way, seconds before, never clicked.
      const prefixes = (typed.get(t.term) ?? []).map((p, k) => ({
        term: p.text,
        at: at - (k + 1) * 5_000,
        hits: Math.ceil(hits * p.share),
        clicks: 0,
        page: null,
      }));
      const full = { term: t.term, at, hits, clicks: clicksOf(t.term, hits, t.ctr), page: t.page };
      return [full, ...prefixes];
    });
    const tail = Array.from({ length: seed.TAIL_TERMS }, (_, i) => i)
      .filter((i) => hash3(s, 1000 + i, day) % 9 === 0)
      .map((i) => ({
        term: `tail term ${String(i).padStart(3, '0')}`,
        at,
        hits: 1,
        clicks: i % 2,
        page: '/guides/page-0004',
      }));
    return [...main, ...tail];
  });
}

export function makeFeedback(now: number, s: number, mix: InsightsMix = {}): FeedbackRow[] {
  const today = Math.floor(now / DAY_MS);
  const rows = dayRecords(now, (day, start) => {
    const out: FeedbackRow[] = [];
    const add = (path: string, n: number, f: Partial<FeedbackRow>) => {
      const at =
        start + 3_600_000 * (1 + (out.length % 20)) + (hash3(s, out.length, day) % 3_000_000);
      out.push({
        id: `fb_${day}_${out.length}`,
        path,
        comment: null,
        createdAt: new Date(at).toISOString(),
        source: 'contextual',
        status: n % 5 === 4 ? 'resolved' : 'pending',
        ...f,
      });
    };
    seed.PAGE_VOTES.forEach((p, i) => {
      for (let n = 0; n < hash3(s, i, day) % (p.up + 1); n++) add(p.path, n, { helpful: true });
      for (let n = 0; n < hash3(s, i + 50, day) % (p.down + 1); n++) {
        const comment =
          p.comments.length && n === 0
            ? p.comments[hash3(s, i, day + n) % p.comments.length]!
            : null;
        add(p.path, n, { helpful: false, comment });
      }
      for (let n = 0; n < hash3(s, i + 90, day) % ((p.code ?? 0) + 1); n++) {
        add(p.path, n, {
          source: 'code_snippet',
          comment: 'This snippet does not compile',
          code: 'curl -H "Authorization: Bearer …"',
          filename: null,
          lang: 'bash',
        });
      }
    });
    for (let i = 0; i < seed.TAIL_PAGES; i++) {
      if (hash3(s, 200 + i, day) % 5 === 0)
        add(`/guides/page-${String(i + 10).padStart(4, '0')}`, 0, { helpful: true });
    }
    return out;
  });
  // Late on their day, so they are the latest of their page.
  const pii = (mix.pii ? hostile.PII_FEEDBACK : []).map((f, i) => ({
    id: `fb_pii_${i}`,
    path: f.path,
    comment: f.comment,
    createdAt: new Date((today - f.daysAgo) * DAY_MS + 82_800_000 + i * 1_000).toISOString(),
    source: 'contextual' as const,
    status: 'pending' as const,
    helpful: false,
  }));
  return [...rows, ...pii]
    .filter((f) => Date.parse(f.createdAt) < now)
    .sort((a, b) =>
      a.createdAt < b.createdAt ? 1 : a.createdAt > b.createdAt ? -1 : a.id < b.id ? 1 : -1,
    );
}
