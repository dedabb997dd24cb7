import type { Steps } from '../reports/turns.ts';
import { pacer } from './pace.ts';
import { cosineFor, cosinePairs, type SemanticOptions, semanticScore } from './semantic.ts';

/**
 * How alike two questions are: the cosine of their TF-IDF vectors. Each question is the set
 * of its terms (normalise.ts), each term weighted by the square of its inverse document
 * frequency over the questions being grouped, `(ln((1 + N) / (1 + df)) + 1)²`: a term many
 * questions use (`key`) counts for much less than one few use (`rotat`, `delet`). Squared,
 * because the questions of one week are a small, skewed sample: when most of them are about
 * rotating keys, plain IDF makes `rotat` nearly as common as `key`, and "delete API key"
 * then looks half like "rotate API key" (0.5 unweighted, 0.17 squared, for 7 rotations
 * and 1 deletion among 16 questions). A term in fewer than `MIN_DF` questions is
 * weighted as if it were in `MIN_DF`: the rarest words of a sample are the least reliably
 * rare, and weighting them highest would make every question with one unusual word
 * (`downtime`, `leaked`) a topic of its own. The floor grows with the sample (1 up to 30
 * questions, 3 from 90): in a handful, that two questions share a word is all the evidence
 * that it is common, and a floor would weigh `key` like `rotat` in "rotate API key" and
 * "delete API key". Vectors are scaled to length 1, so the cosine is their dot product: 1
 * for the same terms, 0 for none shared.
 *
 * Only pairs that share a term can be alike; an index from each term to the questions using
 * it finds them, so the work grows with the pairs that share terms, not with all n² pairs.
 * Pairs below `floor` are left out (read as 0), and each question keeps only its
 * `neighbours` most alike others (a pair stays if it is among either one's): the graph stays
 * sparse, and small, when a few terms are in most questions.
 *
 * With sentence vectors (semantic.ts), a pair is as alike as the larger of its TF-IDF cosine
 * and its meaning score, and pairs that share no term come from comparing the vectors.
 */

export const MIN_DF = 3;
/** …once there are this many questions per unit of it: 90 questions or more for all of it. */
export const MIN_DF_PER = 30;

export interface Item {
  terms: readonly string[];
  /** The service's `queryCategory`, or null. */
  category: string | null;
  /** How many distinct texts it stands for (texts with the same terms are one item). */
  weight: number;
}

/** Pairs (a < b) and their similarity, in typed arrays: hundreds of thousands fit in a few MB. */
export class Edges {
  a = new Int32Array(256);
  b = new Int32Array(256);
  similarity = new Float64Array(256);
  length = 0;

  push(a: number, b: number, similarity: number): void {
    if (this.length === this.a.length) {
      const grow = <T extends Int32Array | Float64Array>(x: T, y: T) => {
        y.set(x);
        return y;
      };
      this.a = grow(this.a, new Int32Array(this.length * 2));
      this.b = grow(this.b, new Int32Array(this.length * 2));
      this.similarity = grow(this.similarity, new Float64Array(this.length * 2));
    }
    this.a[this.length] = a;
    this.b[this.length] = b;
    this.similarity[this.length++] = similarity;
  }
}

export interface SimilarityOptions {
  /** Pairs below this cosine are dropped. */
  floor: number;
  /** How many of its most alike others each item keeps. */
  neighbours: number;
  /** Two items of different (non-null) categories are never alike. */
  categories: boolean;
  /** The power IDF is raised to (2; 1 is plain TF-IDF). */
  idfPower: number;
  /** A same-category pair's cosine is multiplied by this (at most 1 then; 1: no effect). */
  sameCategoryFactor: number;
  /** Each item's sentence vector (null: none), and how its cosine counts (semantic.ts). */
  semantic?: { vectors: readonly (Float32Array | null)[]; score: SemanticOptions } | undefined;
}

/** Each item's terms as term ids with unit-length TF-IDF weights. */
function weigh(items: readonly Item[], power: number): { ids: number[]; weights: number[] }[] {
  const ids = new Map<string, number>();
  const df: number[] = [];
  let total = 0;
  for (const item of items) {
    total += item.weight;
    for (const t of item.terms) {
      let id = ids.get(t);
      if (id === undefined) {
        id = df.push(0) - 1;
        ids.set(t, id);
      }
      df[id]! += item.weight;
    }
  }
  const floor = Math.min(MIN_DF, Math.max(1, total / MIN_DF_PER));
  return items.map((item) => {
    const termIds = item.terms.map((t) => ids.get(t)!);
    const raw = termIds.map(
      (id) => (Math.log((1 + total) / (1 + Math.max(floor, df[id]!))) + 1) ** power,
    );
    const norm = Math.sqrt(raw.reduce((s, w) => s + w * w, 0)) || 1;
    return { ids: termIds, weights: raw.map((w) => w / norm) };
  });
}

/** Every pair of items at or above `floor`, in steps (src/reports/turns.ts). */
export function* similarityEdges(items: readonly Item[], o: SimilarityOptions): Steps<Edges> {
  const vectors = weigh(items, o.idfPower);
  yield;
  const due = pacer();
  // postings[term] lists (item, weight) of the items before the current one.
  const postings: { item: number[]; weight: number[] }[] = [];
  const acc = new Float64Array(items.length);
  const touched: number[] = [];
  const edges = new Edges();
  for (let b = 0; b < items.length; b++) {
    const { ids, weights } = vectors[b]!;
    for (let k = 0; k < ids.length; k++) {
      const p = postings[ids[k]!];
      if (!p) continue;
      const w = weights[k]!;
      for (let x = 0; x < p.item.length; x++) {
        const a = p.item[x]!;
        if (acc[a] === 0) touched.push(a);
        acc[a]! += w * p.weight[x]!;
      }
    }
    for (const a of touched) {
      const s = adjust(acc[a]!, items[a]!.category, items[b]!.category, o);
      if (s >= o.floor && s > 0) edges.push(a, b, s);
      acc[a] = 0;
    }
    touched.length = 0;
    for (let k = 0; k < ids.length; k++) {
      let p = postings[ids[k]!];
      if (!p) {
        p = { item: [], weight: [] };
        postings[ids[k]!] = p;
      }
      p.item.push(b);
      p.weight.push(weights[k]!);
    }
    if (due()) yield;
  }
  if (o.semantic) yield* addSemantic(edges, items, o.semantic, o);
  return yield* strongest(edges, items.length, o.neighbours);
}

/**
 * Each pair's meaning score joins its TF-IDF edge (the larger counts) or makes an edge of its
 * own when at least `floor`. The category counts as it does for words: two items of
 * different categories stay unlike, two of one category are `sameCategoryFactor` more alike.
 */
function* addSemantic(
  edges: Edges,
  items: readonly Item[],
  semantic: NonNullable<SimilarityOptions['semantic']>,
  o: SimilarityOptions,
): Steps<void> {
  const minCosine = cosineFor(o.floor, semantic.score);
  if (minCosine > 1) return;
  const n = items.length;
  const lexical = new Map<number, number>();
  const due = pacer();
  for (let e = 0; e < edges.length; e++) {
    lexical.set(edges.a[e]! * n + edges.b[e]!, e);
    if ((e & 1023) === 0 && due()) yield;
  }
  yield;
  yield* cosinePairs(semantic.vectors, minCosine, (a, b, cosine) => {
    const s = adjust(
      semanticScore(cosine, semantic.score),
      items[a]!.category,
      items[b]!.category,
      o,
    );
    if (s < o.floor || s <= 0) return;
    const e = lexical.get(a * n + b);
    if (e === undefined) edges.push(a, b, s);
    else if (s > edges.similarity[e]!) edges.similarity[e] = s;
  });
}

/** The edges among the `k` most alike of either of their two items. */
function* strongest(edges: Edges, n: number, k: number): Steps<Edges> {
  // Each item's edges, listed item by item (counts, then offsets, then the edge numbers).
  // Paced too: with sentence vectors a big report has a million edges or more.
  const due = pacer();
  const start = new Int32Array(n + 1);
  for (let e = 0; e < edges.length; e++) {
    start[edges.a[e]! + 1]!++;
    start[edges.b[e]! + 1]!++;
    if ((e & 16383) === 0 && due()) yield;
  }
  for (let i = 0; i < n; i++) start[i + 1]! += start[i]!;
  const byItem = new Int32Array(2 * edges.length);
  const filled = start.slice(0, n);
  for (let e = 0; e < edges.length; e++) {
    byItem[filled[edges.a[e]!]!++] = e;
    byItem[filled[edges.b[e]!]!++] = e;
    if ((e & 16383) === 0 && due()) yield;
  }
  yield;
  const kept = new Uint8Array(edges.length);
  for (let i = 0; i < n; i++) {
    const own = byItem.subarray(start[i]!, start[i + 1]!);
    if (own.length > k) own.sort((x, y) => edges.similarity[y]! - edges.similarity[x]! || x - y);
    for (let j = 0; j < Math.min(k, own.length); j++) kept[own[j]!] = 1;
    if (due()) yield;
  }
  const out = new Edges();
  for (let e = 0; e < edges.length; e++) {
    if (kept[e]) out.push(edges.a[e]!, edges.b[e]!, edges.similarity[e]!);
    if ((e & 16383) === 0 && due()) yield;
  }
  return out;
}

function adjust(cosine: number, a: string | null, b: string | null, o: SimilarityOptions) {
  // Rounding may leave the cosine of equal vectors a hair above 1.
  const s = Math.min(1, cosine);
  if (!o.categories || a === null || b === null) return s;
  if (a !== b) return 0;
  return Math.min(1, s * o.sameCategoryFactor);
}
