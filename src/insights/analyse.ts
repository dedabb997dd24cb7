import type {
  Conversation,
  FeedbackEntry,
  PageFeedback,
  SearchRow,
} from '../api/insights-schemas.ts';
import { type Change, change } from '../reports/aggregate.ts';
import { drain, type Steps } from '../reports/turns.ts';
import { DEFAULT_GROUPING, type GroupingOptions, groupTopicSteps, type Topic } from './topics.ts';

export type { Change };

/** Thresholds of the pure analyses; defaults are what `/insights` uses. */
export interface InsightOptions {
  /** A search is a gap with at least this many hits and a CTR at or below `maxCtr`. */
  minSearchHits: number;
  /** Click-through rate as a fraction 0..1; 0.05 = one click in twenty searches. */
  maxCtr: number;
  /** A page is "disliked" with at least this many thumbs down. */
  minThumbsDown: number;
  /** How many of each list to keep. */
  topN: number;
  /** Latest comments kept per disliked page. */
  comments: number;
  /** How questions and search terms are grouped into topics (topics.ts). */
  grouping: GroupingOptions;
}

export const DEFAULT_INSIGHTS: InsightOptions = {
  minSearchHits: 5,
  maxCtr: 0.05,
  minThumbsDown: 2,
  topN: 5,
  comments: 3,
  grouping: DEFAULT_GROUPING,
};

/** Unanswered assistant questions grouped into topics (topics.ts), largest first. */
export function questionGaps(
  conversations: readonly Conversation[],
  topN: number,
  grouping: GroupingOptions = DEFAULT_GROUPING,
): Topic[] {
  return drain(questionGapSteps(conversations, topN, grouping));
}

/** `questionGaps` in steps that give the event loop back (src/reports/turns.ts). */
export function* questionGapSteps(
  conversations: readonly Conversation[],
  topN: number,
  grouping: GroupingOptions = DEFAULT_GROUPING,
): Steps<Topic[]> {
  const unanswered = conversations.filter((c) => c.resolutionStatus === 'unanswered');
  // The service's own category, where it gave one, keeps questions of two categories apart.
  const topics = yield* groupTopicSteps(
    unanswered.map((c) => ({ text: c.query, at: c.timestamp, category: c.queryCategory })),
    grouping,
  );
  return topics.slice(0, topN);
}

/**
 * Search terms are two or three words, and two that share one of their two words are most
 * often two needs (`webhook retries`, `webhook signature`): they are joined only when at
 * least `SEARCH_SIMILARITY` alike (`okta` and `okta sso` are), or the team's threshold if higher.
 */
export const SEARCH_SIMILARITY = 0.55;
const forSearches = (g: GroupingOptions): GroupingOptions => ({
  ...g,
  threshold: Math.max(g.threshold, SEARCH_SIMILARITY),
});

export interface SearchGap {
  /** The searches' terms, grouped like questions: hits summed, CTR weighted by hits. */
  topic: Topic;
  hits: number;
  ctr: number;
  /** No search of the topic led to a click. */
  noClicks: boolean;
}

/**
 * Searches many made and (almost) nobody followed: `hits ≥ minSearchHits` and `ctr ≤ maxCtr`
 * (or no clicked page at all), grouped into topics by the same rule as questions.
 */
export function searchGaps(rows: readonly SearchRow[], o: InsightOptions): SearchGap[] {
  return drain(searchGapSteps(rows, o));
}

/** `searchGaps` in steps that give the event loop back (src/reports/turns.ts). */
export function* searchGapSteps(rows: readonly SearchRow[], o: InsightOptions): Steps<SearchGap[]> {
  const weak = rows.filter(
    (r) => r.hits >= o.minSearchHits && (r.ctr <= o.maxCtr || r.topClickedPage === null),
  );
  const byText = new Map(weak.map((r) => [r.searchQuery.trim(), r]));
  const topics = yield* groupTopicSteps(
    weak.map((r) => ({ text: r.searchQuery, count: r.hits, at: r.lastSearchedAt })),
    forSearches(o.grouping),
  );
  return topics.slice(0, o.topN).map((topic) => {
    const members = topic.variants.map((v) => byText.get(v.text)).filter((r) => r !== undefined);
    const clicks = members.reduce((n, r) => n + r.ctr * r.hits, 0);
    return {
      topic,
      hits: topic.count,
      ctr: topic.count > 0 ? clicks / topic.count : 0,
      noClicks: members.every((r) => r.topClickedPage === null || r.ctr === 0),
    };
  });
}

/** The most searched terms with their CTR and most clicked page, as the service ranks them. */
export function topSearches(rows: readonly SearchRow[], topN: number): SearchRow[] {
  return [...rows]
    .sort((a, b) => b.hits - a.hits || (a.searchQuery < b.searchQuery ? -1 : 1))
    .slice(0, topN);
}

export interface DislikedPage {
  path: string;
  thumbsDown: number;
  thumbsUp: number;
  /** Thumbs down over all thumbs, 0..1. */
  downShare: number;
  /**
   * Distinct comments (same words, any case or spacing), newest first, verbatim (the Slack
   * side escapes and cuts); `count` says how many readers left the same one.
   */
  comments: { text: string; at: string | null; count: number }[];
}

/**
 * Pages with at least `minThumbsDown` thumbs down, most thumbs down first, then the larger
 * share, then path; each with its latest negative comments from the feedback entries read.
 * Thumbs down the team marked resolved or dismissed (among the entries read) are not
 * counted, and their comments not shown: handled feedback does not keep coming back.
 */
export function dislikedPages(
  pages: readonly PageFeedback[],
  entries: readonly FeedbackEntry[],
  o: InsightOptions,
): DislikedPage[] {
  const handled = new Map<string, number>();
  for (const e of entries)
    if (e.helpful === false && !isOpen(e)) handled.set(e.path, (handled.get(e.path) ?? 0) + 1);
  return pages
    .map((p) => ({ ...p, thumbsDown: Math.max(0, p.thumbsDown - (handled.get(p.path) ?? 0)) }))
    .filter((p) => p.thumbsDown >= o.minThumbsDown)
    .map((p) => ({
      path: p.path,
      thumbsDown: p.thumbsDown,
      thumbsUp: p.thumbsUp,
      downShare: p.thumbsDown / (p.thumbsDown + p.thumbsUp),
      comments: latestComments(entries, p.path, o.comments),
    }))
    .sort(
      (a, b) =>
        b.thumbsDown - a.thumbsDown || b.downShare - a.downShare || (a.path < b.path ? -1 : 1),
    )
    .slice(0, o.topN);
}

/** Feedback still to be looked at: not marked resolved or dismissed by the team. */
export const isOpen = (e: Pick<FeedbackEntry, 'status'>) =>
  e.status !== 'resolved' && e.status !== 'dismissed';

function latestComments(entries: readonly FeedbackEntry[], path: string, n: number) {
  const distinct = new Map<string, DislikedPage['comments'][number]>();
  const newestFirst = entries
    .filter(
      (e) =>
        e.path === path && e.helpful === false && isOpen(e) && e.comment && e.comment.trim() !== '',
    )
    .sort((a, b) => (b.createdAt ?? '').localeCompare(a.createdAt ?? ''));
  for (const e of newestFirst) {
    const text = (e.comment ?? '').trim();
    const key = text.toLowerCase().replace(/\s+/g, ' ');
    const seen = distinct.get(key);
    if (seen) seen.count += 1;
    else distinct.set(key, { text, at: e.createdAt, count: 1 });
  }
  return [...distinct.values()].slice(0, n);
}

/** What a period's report counts, and what is compared with the previous period. */
export interface PeriodCounts {
  /** Search events (`totalSearches`). */
  searches: number;
  /** Assistant turns read, and how many of them were unanswered; null when not read in full. */
  questions: number | null;
  unanswered: number | null;
  /** Thumbs down over the pages read; null when by-page was cut (`hasMore`). */
  thumbsDown: number | null;
}

export function countsChange(
  current: PeriodCounts,
  previous: PeriodCounts | undefined,
): Partial<Record<keyof PeriodCounts, Change>> {
  const out: Partial<Record<keyof PeriodCounts, Change>> = {};
  if (!previous) return out;
  for (const k of ['searches', 'questions', 'unanswered', 'thumbsDown'] as const) {
    const [c, p] = [current[k], previous[k]];
    if (c !== null && p !== null) out[k] = change(c, p);
  }
  return out;
}
