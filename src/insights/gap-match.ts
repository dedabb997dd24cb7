import type { GapItem } from './gaps.ts';

/**
 * Which stored gap a report's item is: a gap keeps the word sets it was listed under (its
 * signatures: its question topic's, its searches', growing as wordings drift), and an item
 * is the stored gap with which it shares the most: the best Jaccard index between any of
 * its signatures and any of the gap's, at least `SAME_GAP` (the grouping's own 60%), so
 * "api key rotat" this week is the gap listed as "api key rotat" or "key rotat" before, and
 * never "api delet key" (2 of 4 words). A page's signature (`page:<path>`) matches itself
 * alone. Each gap is one item of a report at most: the best pairs are taken first (then the
 * higher-ranked item, then the older gap). Pure.
 */

export const SAME_GAP = 0.6;
/** Signatures kept per gap: the newest, after the first (its identity at creation). */
export const SIGNATURES_KEPT = 20;

export interface KnownGap {
  id: number;
  signatures: readonly string[];
}

const isPage = (sig: string) => sig.startsWith('page:');
const wordsOf = (sig: string) => (isPage(sig) ? [] : sig.split(' ').filter(Boolean));

function jaccard(a: readonly string[], b: ReadonlySet<string>): number {
  if (a.length === 0 || b.size === 0) return 0;
  const shared = a.filter((x) => b.has(x)).length;
  return shared / (a.length + b.size - shared);
}

/** Item index → gap id, for the items that are a known gap. */
export function matchGaps(
  items: readonly Pick<GapItem, 'signatures'>[],
  known: readonly KnownGap[],
): Map<number, number> {
  const bySig = new Map<string, number[]>();
  const byWord = new Map<string, Set<number>>();
  const sets = known.map((g) => g.signatures.map((s) => new Set(wordsOf(s))));
  known.forEach((g, at) => {
    for (const s of g.signatures) {
      bySig.set(s, [...(bySig.get(s) ?? []), at]);
      for (const w of wordsOf(s)) {
        const list = byWord.get(w) ?? new Set<number>();
        list.add(at);
        byWord.set(w, list);
      }
    }
  });
  const pairs: { item: number; gap: number; score: number }[] = [];
  items.forEach((item, i) => {
    const scores = new Map<number, number>();
    for (const sig of item.signatures) {
      for (const at of bySig.get(sig) ?? []) scores.set(at, 1);
      const words = wordsOf(sig);
      const candidates = new Set<number>();
      for (const w of words) for (const at of byWord.get(w) ?? []) candidates.add(at);
      for (const at of candidates) {
        const best = Math.max(...sets[at]!.map((set) => jaccard(words, set)));
        if (best > (scores.get(at) ?? 0)) scores.set(at, best);
      }
    }
    for (const [at, score] of scores)
      if (score >= SAME_GAP) pairs.push({ item: i, gap: at, score });
  });
  pairs.sort((a, b) => b.score - a.score || a.item - b.item || known[a.gap]!.id - known[b.gap]!.id);
  const out = new Map<number, number>();
  const taken = new Set<number>();
  for (const p of pairs) {
    if (out.has(p.item) || taken.has(p.gap)) continue;
    out.set(p.item, known[p.gap]!.id);
    taken.add(p.gap);
  }
  return out;
}

/** A gap's signatures after a listing: its first, then the newest, at most SIGNATURES_KEPT. */
export function mergeSignatures(kept: readonly string[], seen: readonly string[]): string[] {
  const [first, ...rest] = kept;
  if (first === undefined) return seen.slice(0, SIGNATURES_KEPT);
  const newer = [...rest.filter((s) => !seen.includes(s)), ...seen.filter((s) => s !== first)];
  return [first, ...newer.slice(-(SIGNATURES_KEPT - 1))];
}
