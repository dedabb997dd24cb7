import type { Conversation, FeedbackEntry, SearchRow } from '../api/insights-schemas.ts';
import { drain, type Steps } from '../reports/turns.ts';
import { type DislikedPage, isOpen, type SearchGap } from './analyse.ts';
import { DEFAULT_GROUPING, type GroupingOptions, groupTopics, type Topic } from './topics.ts';

/**
 * One need, one item: a question topic joined with the searches nobody followed and the
 * reader comments on the same need, so that a report lists it once, with one action.
 *
 * Rules (the words are the grouping's own: a topic's `words`, and a search's or comment's
 * words as the grouping reads them, with the team's INSIGHTS_SYNONYMS):
 * - A **search** gap joins the question topic whose words hold all of the search's words
 *   (a search is often a fragment of the question: "okta" → "How do I set up Okta SSO?"), or
 *   that shares at least 60% of their words with it (Jaccard ≥ 0.6; a rule of its own, not
 *   the grouping's, which compares TF-IDF vectors: docs/grouping.md).
 *   Of several, the closest (Jaccard), then the most asked. "delete api key" does not join
 *   "rotate api key" (2 of 4 words, and `delete` is not in it).
 * - A reader **comment** (a thumbs down with words, not marked resolved or dismissed) joins
 *   the question or search item whose words it holds at least 60% of, including the item's
 *   rarest word (the one the fewest items share), so that "Nothing about rotating keys"
 *   joins "rotate API key" and "The API key page is wrong" joins neither rotating nor
 *   deleting keys. Of several, the largest share, then the most met item.
 * - A search or a comment that joins nothing is its own item (a comment stays with its
 *   page). A **disliked page** is an item unless every one of its comments joined another.
 * Items rank by the readers who met them (questions + searches + comments; a page's thumbs
 * down), then the most recent, then the key.
 */

export const JOIN_THRESHOLD = 0.6;
/** Evidence kept per item: distinct wordings, searches, pages asked from, comments. */
export const KEEP = { wordings: 10, searches: 10, pages: 5, comments: 5, askedAt: 1_000 };

export interface GapItem {
  /** What leads it: a question topic, a search nobody followed, or a disliked page. */
  kind: 'question' | 'search' | 'page';
  /** Its identity in the report: the leader's word set, or `page:<path>`. */
  key: string;
  /** The word sets it is known by (its question topic's, its searches'), or its page key. */
  signatures: string[];
  /** The most asked wording, the search term, or the page path (verbatim). */
  title: string;
  asked: number;
  /** Searches of its terms (hits) in the period, and their click-through rate (0..1). */
  searched: number;
  ctr: number | null;
  /** The page's votes, for a disliked page. */
  page: { path: string; thumbsDown: number; thumbsUp: number; downShare: number } | null;
  wordings: { text: string; count: number }[];
  searches: { text: string; hits: number; ctr: number }[];
  /** Where readers were when they asked (paths), most first. */
  pages: { path: string; count: number }[];
  comments: { path: string; text: string; count: number }[];
  /** How many of each there were before the lists above were cut. */
  distinct: { wordings: number; searches: number; comments: number; pages: number };
  /** When its questions were asked (epoch ms, ascending; the latest `KEEP.askedAt`). */
  askedAt: number[];
  /** The latest search of its terms (ISO), if any. */
  searchedLastAt: string | null;
  /** Readers who met it: the rank. */
  weight: number;
  lastAt: string | null;
}

export interface JoinInput {
  /** Every question topic, every search gap (not cut to the top N). */
  questions: readonly Topic[];
  searches: readonly SearchGap[];
  /** The search rows read, for each term's own CTR. */
  rows: readonly SearchRow[];
  /** The unanswered questions grouped into `questions`: where and when each was asked. */
  unanswered: readonly Conversation[];
  disliked: readonly DislikedPage[];
  /** Feedback entries read: their negative comments are matched. */
  feedback: readonly FeedbackEntry[];
  /** The grouping's options (the team's synonyms): comments are read with them. */
  grouping?: GroupingOptions;
}

/** The items of a report, ranked (rules above). */
export function joinGaps(input: JoinInput): GapItem[] {
  return drain(joinGapSteps(input));
}

export function* joinGapSteps(input: JoinInput): Steps<GapItem[]> {
  const byText = conversationsByText(input.unanswered);
  // The words each item is matched on: its leading topic's.
  const lead = new Map<GapItem, string[]>();
  const items = input.questions.map((t) => {
    const item = questionItem(t, byText);
    lead.set(item, t.words);
    return item;
  });
  yield;
  const rows = new Map(input.rows.map((r) => [fold(r.searchQuery), r]));
  for (const g of input.searches) {
    const home = searchHome(g.topic, input.questions, items);
    if (home) addSearch(home, g, rows);
    else {
      const item = addSearch(emptyItem('search', g.topic), g, rows);
      lead.set(item, g.topic.words);
      items.push(item);
    }
  }
  yield;
  const comments = negativeComments(input.feedback);
  const leftOnPages = attachComments(items, lead, comments, input.grouping ?? DEFAULT_GROUPING);
  yield;
  for (const p of input.disliked) {
    const left = leftOnPages.get(p.path) ?? [];
    const had = comments.some((c) => c.path === p.path);
    // Every comment the page had joined another item: that item carries it.
    if (!had || left.length > 0) items.push(pageItem(p, left));
  }
  for (const item of items) finish(item);
  return items.sort(
    (a, b) =>
      b.weight - a.weight ||
      (b.lastAt ?? '').localeCompare(a.lastAt ?? '') ||
      (a.key < b.key ? -1 : a.key > b.key ? 1 : 0),
  );
}

const fold = (s: string) => s.trim().replace(/\s+/g, ' ').toLowerCase();
const wordsKey = (t: Topic) => (t.words.length > 0 ? t.words.join(' ') : t.key);

function conversationsByText(cs: readonly Conversation[]): Map<string, Conversation[]> {
  const out = new Map<string, Conversation[]>();
  for (const c of cs) {
    const k = fold(c.query);
    const list = out.get(k);
    if (list) list.push(c);
    else out.set(k, [c]);
  }
  return out;
}

/** An item with nothing counted yet: of a topic, or titled by a search or a page. */
export function emptyItem(kind: GapItem['kind'], t: Topic | undefined, title = ''): GapItem {
  return {
    kind,
    key: t ? wordsKey(t) : title,
    signatures: t ? [wordsKey(t)] : [],
    title: t?.example ?? title,
    asked: 0,
    searched: 0,
    ctr: null,
    page: null,
    wordings: [],
    searches: [],
    pages: [],
    comments: [],
    distinct: { wordings: 0, searches: 0, comments: 0, pages: 0 },
    askedAt: [],
    searchedLastAt: null,
    weight: 0,
    lastAt: t?.lastAt ?? null,
  };
}

/** Words as the grouping reads them, for a text that is not a topic (a comment). */
const wordsOf = (text: string, grouping: GroupingOptions): string[] =>
  groupTopics([{ text }], grouping)[0]?.words ?? [];

function questionItem(t: Topic, byText: Map<string, Conversation[]>): GapItem {
  const item = emptyItem('question', t);
  item.asked = t.count;
  item.wordings = t.variants.map((v) => ({ text: v.text, count: v.count }));
  const pages = new Map<string, number>();
  for (const v of t.variants) {
    for (const c of byText.get(fold(v.text)) ?? []) {
      const at = Date.parse(c.timestamp);
      if (Number.isFinite(at)) item.askedAt.push(at);
      const path = pathOf(c.pageUrl);
      if (path) pages.set(path, (pages.get(path) ?? 0) + 1);
    }
  }
  item.pages = [...pages]
    .map(([path, count]) => ({ path, count }))
    .sort((a, b) => b.count - a.count || (a.path < b.path ? -1 : 1));
  return item;
}

/** The path of the page a question was asked from (the URL's path), or null. */
export function pathOf(pageUrl: string | null): string | null {
  if (!pageUrl) return null;
  try {
    return new URL(pageUrl).pathname || '/';
  } catch {
    return pageUrl.startsWith('/') ? pageUrl : null;
  }
}

function jaccard(a: readonly string[], b: readonly string[]): number {
  if (a.length === 0 || b.length === 0) return 0;
  const bs = new Set(b);
  const shared = a.filter((x) => bs.has(x)).length;
  return shared / (a.length + b.length - shared);
}

/** The question item a search joins (rule above), or undefined. */
function searchHome(
  search: Topic,
  topics: readonly Topic[],
  items: readonly GapItem[],
): GapItem | undefined {
  if (search.words.length === 0) return undefined;
  let best: { at: number; score: number } | undefined;
  topics.forEach((t, at) => {
    const words = new Set(t.words);
    const inside = search.words.every((w) => words.has(w));
    const score = jaccard(search.words, t.words);
    if (!inside && score < JOIN_THRESHOLD) return;
    const better =
      !best || score > best.score || (score === best.score && t.count > topics[best.at]!.count);
    if (better) best = { at, score };
  });
  return best && items[best.at];
}

function addSearch(item: GapItem, g: SearchGap, rows: Map<string, SearchRow>): GapItem {
  const clicks = (item.ctr ?? 0) * item.searched + g.ctr * g.hits;
  item.searched += g.hits;
  item.ctr = item.searched > 0 ? clicks / item.searched : 0;
  const sig = wordsKey(g.topic);
  if (!item.signatures.includes(sig)) item.signatures.push(sig);
  for (const v of g.topic.variants) {
    const row = rows.get(fold(v.text));
    item.searches.push({ text: v.text, hits: v.count, ctr: row?.ctr ?? g.ctr });
    const at = row?.lastSearchedAt ?? null;
    if (at && (!item.searchedLastAt || at > item.searchedLastAt)) item.searchedLastAt = at;
  }
  if (g.topic.lastAt && (!item.lastAt || g.topic.lastAt > item.lastAt))
    item.lastAt = g.topic.lastAt;
  return item;
}

interface Comment {
  path: string;
  text: string;
  count: number;
  at: string | null;
}

/**
 * Distinct negative comments (same words, any case or spacing, on the same page), newest
 * first; feedback the team marked resolved or dismissed is left out.
 */
export function negativeComments(entries: readonly FeedbackEntry[]): Comment[] {
  const distinct = new Map<string, Comment>();
  const open = entries
    .filter((e) => e.helpful === false && isOpen(e) && (e.comment ?? '').trim() !== '')
    .sort((a, b) => (b.createdAt ?? '').localeCompare(a.createdAt ?? ''));
  for (const e of open) {
    const text = (e.comment ?? '').trim();
    const key = `${e.path}\n${fold(text)}`;
    const seen = distinct.get(key);
    if (seen) seen.count += 1;
    else distinct.set(key, { path: e.path, text, count: 1, at: e.createdAt });
  }
  return [...distinct.values()];
}

/** Attaches comments to items (rule above); answers the comments left, by page. */
function attachComments(
  items: readonly GapItem[],
  lead: ReadonlyMap<GapItem, string[]>,
  comments: readonly Comment[],
  grouping: GroupingOptions,
): Map<string, Comment[]> {
  const df = new Map<string, number>();
  for (const words of lead.values())
    for (const w of new Set(words)) df.set(w, (df.get(w) ?? 0) + 1);
  const targets = items.flatMap((item) => {
    const words = lead.get(item) ?? [];
    if (words.length === 0) return [];
    const rarest = Math.min(...words.map((w) => df.get(w) ?? 1));
    return [{ item, words, rare: new Set(words.filter((w) => df.get(w) === rarest)) }];
  });
  const left = new Map<string, Comment[]>();
  for (const c of comments) {
    const words = new Set(wordsOf(c.text, grouping));
    let best: { item: GapItem; share: number } | undefined;
    for (const { item, words: its, rare } of targets) {
      const shared = its.filter((w) => words.has(w));
      const share = shared.length / its.length;
      if (share < JOIN_THRESHOLD || !shared.some((w) => rare.has(w))) continue;
      if (!best || share > best.share || (share === best.share && size(item) > size(best.item)))
        best = { item, share };
    }
    if (best) best.item.comments.push({ path: c.path, text: c.text, count: c.count });
    else left.set(c.path, [...(left.get(c.path) ?? []), c]);
  }
  return left;
}

const size = (i: GapItem) => i.asked + i.searched;

function pageItem(p: DislikedPage, left: Comment[]): GapItem {
  const item = emptyItem('page', undefined, p.path);
  item.key = `page:${p.path}`;
  item.signatures = [item.key];
  item.page = {
    path: p.path,
    thumbsDown: p.thumbsDown,
    thumbsUp: p.thumbsUp,
    downShare: p.downShare,
  };
  item.comments = left.map((c) => ({ path: c.path, text: c.text, count: c.count }));
  item.lastAt = left[0]?.at ?? null;
  return item;
}

/** Weight, cut lists and counts, once everything is attached. */
function finish(item: GapItem): void {
  const comments = item.comments.reduce((n, c) => n + c.count, 0);
  item.weight = item.page ? item.page.thumbsDown : item.asked + item.searched + comments;
  if (item.kind === 'search' && item.searches[0]) item.title = item.searches[0].text;
  item.distinct = {
    wordings: item.wordings.length,
    searches: item.searches.length,
    comments: item.comments.length,
    pages: item.pages.length,
  };
  item.wordings = item.wordings.slice(0, KEEP.wordings);
  item.searches = item.searches.sort((a, b) => b.hits - a.hits).slice(0, KEEP.searches);
  item.pages = item.pages.slice(0, KEEP.pages);
  item.comments = item.comments.slice(0, KEEP.comments);
  item.askedAt = item.askedAt.sort((a, b) => a - b).slice(-KEEP.askedAt);
}
