import type { Steps } from '../reports/turns.ts';
import { pacer } from './pace.ts';

/**
 * The meaning half of the similarity, when a team's embeddings endpoint gave the texts
 * sentence vectors (src/insights/embeddings.ts, docs/grouping.md): two texts are as alike as
 * `weight × max(0, (cos − zero) / (1 − zero))`, the cosine of their vectors rescaled so that
 * the cosine most unrelated texts reach (`zero`) counts nothing. Pairs that share no word
 * must be able to meet, so every pair of vectors is compared: a blocked brute force over one
 * Float32Array, in steps of a few milliseconds (pace.ts) that give the event loop back.
 */

export interface SemanticOptions {
  /** The most the meaning half can add (a pair of identical vectors scores this). */
  weight: number;
  /** The cosine that counts as nothing (unrelated sentences of a model score about this). */
  zero: number;
}

/** How alike a cosine makes two texts, by the rule above. */
export const semanticScore = (cosine: number, o: SemanticOptions): number =>
  o.weight * Math.max(0, (Math.min(1, cosine) - o.zero) / (1 - o.zero));

/** The cosine below which `semanticScore` stays under `floor` (above 1: none reaches it). */
export const cosineFor = (floor: number, o: SemanticOptions): number =>
  o.zero + (floor * (1 - o.zero)) / o.weight;

/** Rows compared against each column in one pass: a column is read once for all of them. */
const BLOCK = 16;

/**
 * Calls `pair(a, b, cosine)` (a < b, indexes into `vectors`) for every two vectors whose
 * cosine is at least `minCosine`; items without a vector (null) are left out. Vectors of
 * another length than the first are left out too (they cannot be compared).
 */
export function* cosinePairs(
  vectors: readonly (Float32Array | null)[],
  minCosine: number,
  pair: (a: number, b: number, cosine: number) => void,
): Steps<void> {
  const { matrix, index, dims } = unitRows(vectors);
  const m = index.length;
  const due = pacer();
  yield;
  for (let i0 = 0; i0 < m; i0 += BLOCK) {
    const i1 = Math.min(m, i0 + BLOCK);
    for (let j = i0 + 1; j < m; j++) {
      const oj = j * dims;
      const last = Math.min(i1, j);
      for (let i = i0; i < last; i++) {
        const oi = i * dims;
        let dot = 0;
        for (let k = 0; k < dims; k++) dot += matrix[oi + k]! * matrix[oj + k]!;
        if (dot >= minCosine) pair(index[i]!, index[j]!, dot);
      }
      if ((j & 31) === 0 && due()) yield;
    }
    if (due()) yield;
  }
}

/** The vectors scaled to length 1, one after another, and the item each row stands for. */
function unitRows(vectors: readonly (Float32Array | null)[]) {
  const dims = vectors.find((v) => v !== null)?.length ?? 0;
  const index: number[] = [];
  for (const [i, v] of vectors.entries()) if (v && v.length === dims) index.push(i);
  const matrix = new Float32Array(index.length * dims);
  for (const [row, i] of index.entries()) {
    const v = vectors[i]!;
    let norm = 0;
    for (let k = 0; k < dims; k++) norm += v[k]! * v[k]!;
    const scale = norm > 0 ? 1 / Math.sqrt(norm) : 0;
    for (let k = 0; k < dims; k++) matrix[row * dims + k] = v[k]! * scale;
  }
  return { matrix, index, dims };
}

/** The normalised mean of some vectors of one length (the texts one item stands for), or null. */
export function meanVector(vectors: readonly (Float32Array | undefined)[]): Float32Array | null {
  const present = vectors.filter((v): v is Float32Array => v !== undefined);
  const first = present[0];
  if (!first) return null;
  if (present.length === 1) return first;
  const sum = new Float32Array(first.length);
  for (const v of present) {
    if (v.length !== first.length) continue;
    let norm = 0;
    for (let k = 0; k < v.length; k++) norm += v[k]! * v[k]!;
    const scale = norm > 0 ? 1 / Math.sqrt(norm) : 0;
    for (let k = 0; k < v.length; k++) sum[k]! += v[k]! * scale;
  }
  return sum;
}
