import type { SearchRow } from '../api/insights-schemas.ts';

/**
 * The search rows of one period as the analyses want them: `ctr` as a fraction 0..1 whatever
 * unit the service sent, and the typing prefixes a search-as-you-type box logs ("abse",
 * "absen" on the way to "absence") folded into the query they grew into. Pure.
 */

export type CtrUnit = 'fraction' | 'percent';

/**
 * `ctr`, read in either unit. The API document does not say whether it is 0..1 or 0..100, so
 * the data says: if any row of the period has a CTR over 1, every row of that period is a
 * percentage and is divided by 100. Decided per period (all the pages of `/searches` read
 * for it), not per page: a later page holds the long tail, whose CTRs are often all 0 or 1
 * and say nothing about the unit. Blind spot: a period read in percent whose every CTR is
 * 1% or less reads as fractions (that needs a site where no term is clicked more than once
 * in a hundred searches). A value still over 1 after that (over 100%) is cut to 1.
 */
export function ctrAsFraction(rows: readonly SearchRow[]): { rows: SearchRow[]; unit: CtrUnit } {
  const unit: CtrUnit = rows.some((r) => r.ctr > 1) ? 'percent' : 'fraction';
  const scale = unit === 'percent' ? 100 : 1;
  return { rows: rows.map((r) => ({ ...r, ctr: Math.min(1, r.ctr / scale) })), unit };
}

/**
 * Rows whose queries read the same (case and spacing aside) as one row: two readers' masked
 * addresses are both "[email]", and the service may list "Okta" apart from "okta". Hits
 * added, clicks added (CTR weighted by hits), the most searched wording and its clicked page
 * (else another's), the later last search; in the order of each query's first row.
 */
export function mergeSameQueries(rows: readonly SearchRow[]): SearchRow[] {
  const byKey = new Map<string, { row: SearchRow; clicks: number; lead: number }>();
  for (const r of rows) {
    const k = key(r.searchQuery);
    const m = byKey.get(k);
    if (!m) {
      byKey.set(k, { row: { ...r }, clicks: r.ctr * r.hits, lead: r.hits });
      continue;
    }
    m.clicks += r.ctr * r.hits;
    if (r.hits > m.lead) {
      m.lead = r.hits;
      m.row.searchQuery = r.searchQuery;
      m.row.topClickedPage = r.topClickedPage ?? m.row.topClickedPage;
    } else m.row.topClickedPage ??= r.topClickedPage;
    m.row.hits += r.hits;
    m.row.ctr = m.row.hits > 0 ? Math.min(1, m.clicks / m.row.hits) : 0;
    if (Date.parse(r.lastSearchedAt) > Date.parse(m.row.lastSearchedAt))
      m.row.lastSearchedAt = r.lastSearchedAt;
  }
  return [...byKey.values()].map((m) => m.row);
}

/** How much later than every query it grew into a prefix may have been searched last. */
export const PREFIX_WINDOW_MS = 10 * 60_000;

const key = (q: string) => q.trim().toLowerCase().replace(/\s+/g, ' ');
const WORD_CHAR = /[\p{L}\p{N}]/u;

/**
 * Whether `p` (a key) is `q` typed part-way: a strict prefix of it that stops inside a word
 * ("absen" of "absence", "rate lim" of "rate limits"), not at a word's end ("api" of
 * "api keys" is a query of its own).
 */
export function isTypingPrefix(p: string, q: string): boolean {
  if (p.length === 0 || p.length >= q.length || !q.startsWith(p)) return false;
  return WORD_CHAR.test(p.at(-1)!) && WORD_CHAR.test(q[p.length]!);
}

/**
 * Folds each typing prefix into the query it grew into. Rule, from the longest query down:
 * a row folds when it is a typing prefix (above) of at least one longer row that stays, it
 * was searched no more often than those rows together (a prefix more searched than what it
 * would grow into, like a real "auth" beside a rarer "authentication", is a query of its
 * own), and its last search is no more than 10 minutes after the latest of theirs (typing
 * goes on within seconds; one searched alone later is a query someone stopped at). It goes
 * into the most searched of them (then the latest, then the first alphabetically): its hits
 * are added (the searches logged for that need, typing included), the later last search is
 * kept, and the query's clicked page unless it has none. The CTR stays the query's own: a
 * prefix nobody clicked was no chance to click (the reader was still typing), so it does
 * not dilute it; a prefix that was clicked adds its clicks and its searches. Rows keep the
 * service's order.
 */
export function foldTypingPrefixes(
  rows: readonly SearchRow[],
  windowMs = PREFIX_WINDOW_MS,
): SearchRow[] {
  const entries = rows.map((row, at) => ({ row, at, key: key(row.searchQuery), into: -1 }));
  const longestFirst = [...entries].sort((a, b) => b.key.length - a.key.length || a.at - b.at);
  const kept: typeof entries = [];
  for (const e of longestFirst) {
    const grewInto = kept.filter((k) => isTypingPrefix(e.key, k.key));
    const target = grewInto.length > 0 ? foldTarget(e.row, grewInto, windowMs) : undefined;
    if (target) e.into = target.at;
    else kept.push(e);
  }
  // Per kept row: its clicks, and the searches that could have led to one.
  const merged = new Map(
    kept.map((e) => [
      e.at,
      { row: { ...e.row }, clicks: e.row.ctr * e.row.hits, chances: e.row.hits },
    ]),
  );
  for (const e of entries) {
    if (e.into < 0) continue;
    const m = merged.get(e.into)!;
    const into = m.row;
    into.hits += e.row.hits;
    if (e.row.ctr > 0) {
      m.clicks += e.row.ctr * e.row.hits;
      m.chances += e.row.hits;
      into.ctr = m.chances > 0 ? Math.min(1, m.clicks / m.chances) : 0;
    }
    into.topClickedPage ??= e.row.topClickedPage;
    if (Date.parse(e.row.lastSearchedAt) > Date.parse(into.lastSearchedAt))
      into.lastSearchedAt = e.row.lastSearchedAt;
  }
  return entries.flatMap((e) => (e.into < 0 ? [merged.get(e.at)!.row] : []));
}

function foldTarget<E extends { row: SearchRow; key: string }>(
  prefix: SearchRow,
  grewInto: readonly E[],
  windowMs: number,
): E | undefined {
  const hits = grewInto.reduce((n, e) => n + e.row.hits, 0);
  const last = Math.max(...grewInto.map((e) => Date.parse(e.row.lastSearchedAt)));
  const at = Date.parse(prefix.lastSearchedAt);
  // Unreadable times say nothing about typing: the row stays.
  if (prefix.hits > hits || !Number.isFinite(at) || !(at <= last + windowMs)) return undefined;
  return [...grewInto].sort(
    (a, b) =>
      b.row.hits - a.row.hits ||
      b.row.lastSearchedAt.localeCompare(a.row.lastSearchedAt) ||
      (a.key < b.key ? -1 : 1),
  )[0];
}
