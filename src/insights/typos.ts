import { drain, type Steps } from '../reports/turns.ts';
import { pacer } from './pace.ts';

/**
 * Typo folding: a word that readers rarely type is read as a word one edit away (a letter
 * added, dropped, changed, or two swapped) that they type more often, or that a synonym
 * phrase uses: `rotaet` → `rotate`, `pagnation` → `pagination`, `singel` → `single`. Only
 * words of 5 letters or more are folded, and only into words of 5 or more (so `sso` never
 * becomes `ssl`), never into or out of a stop word; the counts are of distinct texts in the
 * same report, so a word is only corrected towards what the same readers wrote.
 */

export const TYPO_MIN_LENGTH = 5;

/** Counts a phrase's word counts as this many texts: readers' own words must beat it. */
const VOCABULARY_WEIGHT = 2;

/**
 * For each rare word of `counts`, the word it is read as. `counts`: accent-free word → how
 * many distinct texts use it; `vocabulary`: the synonym phrases' words; `isStop`: a stop word.
 */
export function* typoMapSteps(
  counts: ReadonlyMap<string, number>,
  vocabulary: ReadonlySet<string>,
  isStop: (word: string) => boolean,
): Steps<Map<string, string>> {
  const due = pacer();
  const weight = new Map<string, number>();
  const eligible = (w: string) => w.length >= TYPO_MIN_LENGTH && /^\p{L}+$/u.test(w) && !isStop(w);
  for (const [w, n] of counts) if (eligible(w)) weight.set(w, n);
  for (const w of vocabulary)
    if (eligible(w)) weight.set(w, (weight.get(w) ?? 0) + VOCABULARY_WEIGHT);
  // Every word under itself and under each of its one-letter deletions: two words one edit
  // apart always share a key (SymSpell's deletion index).
  const index = new Map<string, string[]>();
  const add = (k: string, w: string) => {
    const list = index.get(k);
    if (list) list.push(w);
    else index.set(k, [w]);
  };
  for (const w of weight.keys()) {
    for (const k of deletions(w)) add(k, w);
    if (due()) yield;
  }
  const out = new Map<string, string>();
  for (const [w, n] of counts) {
    if (due()) yield;
    if (!eligible(w) || vocabulary.has(w)) continue;
    const own = weight.get(w) ?? n;
    let best: string | undefined;
    let bestWeight = own;
    for (const k of deletions(w)) {
      for (const v of index.get(k) ?? []) {
        const vw = weight.get(v) ?? 0;
        if (v === w || vw < 2 || vw <= bestWeight) continue;
        if (oneEditApart(w, v)) [best, bestWeight] = [v, vw];
      }
    }
    if (best !== undefined) out.set(w, best);
  }
  return out;
}

/** `typoMapSteps` in one go. */
export function typoMap(
  counts: ReadonlyMap<string, number>,
  vocabulary: ReadonlySet<string>,
  isStop: (word: string) => boolean,
): Map<string, string> {
  return drain(typoMapSteps(counts, vocabulary, isStop));
}

/** `w` and each string made by dropping one of its letters. */
function deletions(w: string): string[] {
  const out = [w];
  for (let i = 0; i < w.length; i++) out.push(w.slice(0, i) + w.slice(i + 1));
  return out;
}

/** One insertion, deletion, substitution or swap of neighbours turns `a` into `b`. */
export function oneEditApart(a: string, b: string): boolean {
  if (a === b) return false;
  if (Math.abs(a.length - b.length) > 1) return false;
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i++;
  if (a.length === b.length) {
    if (a.slice(i + 1) === b.slice(i + 1)) return true; // substitution
    return a[i] === b[i + 1] && a[i + 1] === b[i] && a.slice(i + 2) === b.slice(i + 2); // swap
  }
  const [long, short] = a.length > b.length ? [a, b] : [b, a];
  return long.slice(i + 1) === short.slice(i);
}
