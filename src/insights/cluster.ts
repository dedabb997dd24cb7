import type { Steps } from '../reports/turns.ts';
import { pacer } from './pace.ts';
import type { Edges } from './vectors.ts';

/**
 * Agglomerative clustering over a sparse similarity graph (vectors.ts). Every item starts as
 * its own cluster; the two most alike clusters are joined, again and again, while they are at
 * least `threshold` alike. How alike two clusters are is their *linkage*:
 *
 * - `average` (the default): the mean similarity over all pairs of their items, a pair with
 *   no edge counting 0. A question joins a topic when it is close to the topic as a whole,
 *   so a topic does not drift through a chain of small steps ("rotate API key" → "API key"
 *   → "delete API key") as single linkage would.
 * - `complete`: the least alike pair; every pair must be close (tight, smaller topics).
 * - `single`: the most alike pair (chains; kept for comparison).
 *
 * Two clusters whose items carry different categories are never joined (`category`, null
 * for none: a cluster takes the category of its items). Items have weights (how many texts
 * each stands for), and averages count each text, as if the texts were clustered one by one.
 * Ties go to the pair made of the earliest items, so the outcome does not depend on timing.
 *
 * Candidates wait in a heap, best first. A join can only lower how alike the joined cluster
 * is to a cluster linked to just one of the two (the same links over more pairs), so those
 * candidates are left in the heap as they are and checked when they come out: one found
 * lower goes back in with its value now. Only the links the two clusters shared, or the
 * absorbed cluster's, are offered anew: the work follows the links, not the clusters.
 */

export type Linkage = 'average' | 'complete' | 'single';

interface Link {
  /** Sum of weighted similarities, the count of weighted pairs with an edge, min and max. */
  sum: number;
  pairs: number;
  min: number;
  max: number;
}

interface Candidate {
  /** How alike a and b were when offered: never below how alike they are now. */
  value: number;
  a: number;
  b: number;
}

export function* agglomerate(
  weights: readonly number[],
  categories: readonly (string | null)[],
  edges: Edges,
  threshold: number,
  linkage: Linkage = 'average',
): Steps<number[][]> {
  const n = weights.length;
  const size = [...weights];
  const category = [...categories];
  const members = Array.from({ length: n }, (_, i) => [i]);
  const links = Array.from({ length: n }, () => new Map<number, Link>());
  const alive = new Array<boolean>(n).fill(true);
  const due = pacer();
  const value = (a: number, b: number, l: Link) =>
    linkage === 'average'
      ? l.sum / (size[a]! * size[b]!)
      : linkage === 'single'
        ? l.max
        : l.pairs >= size[a]! * size[b]!
          ? l.min
          : 0;
  const heap = new MaxHeap();
  const offer = (a: number, b: number, l: Link) => {
    const v = value(a, b, l);
    if (v >= threshold) heap.push(v, Math.min(a, b), Math.max(a, b));
  };
  for (let i = 0; i < edges.length; i++) {
    const [a, b, s] = [edges.a[i]!, edges.b[i]!, edges.similarity[i]!];
    const w = weights[a]! * weights[b]!;
    const link = { sum: s * w, pairs: w, min: s, max: s };
    links[a]!.set(b, link);
    links[b]!.set(a, link);
    offer(a, b, link);
    if (i % 1_000 === 0 && due()) yield;
  }
  for (let popped = 1; ; popped++) {
    if (popped % 64 === 0 && due()) yield;
    if (heap.size === 0) break;
    const top = heap.pop();
    const { a, b } = top;
    if (!alive[a] || !alive[b]) continue;
    const link = links[a]!.get(b);
    if (!link) continue;
    if (value(a, b, link) < top.value) {
      offer(a, b, link); // lower since it was offered: back in with what it is now
      continue;
    }
    const [ca, cb] = [category[a], category[b]];
    if (ca !== null && cb !== null && ca !== cb) continue;
    // Keep the cluster with more links; fold the other's links into it.
    const [keep, gone] = links[a]!.size >= links[b]!.size ? [a, b] : [b, a];
    merge(keep, gone);
    category[keep] = ca ?? cb ?? null;
  }

  function merge(keep: number, gone: number): void {
    links[keep]!.delete(gone);
    size[keep]! += size[gone]!;
    alive[gone] = false;
    members[keep]!.push(...members[gone]!);
    members[gone] = [];
    for (const [c, l] of links[gone]!) {
      if (c === keep) continue;
      links[c]!.delete(gone);
      const k = links[keep]!.get(c);
      const joined = k
        ? {
            sum: k.sum + l.sum,
            pairs: k.pairs + l.pairs,
            min: Math.min(k.min, l.min),
            max: Math.max(k.max, l.max),
          }
        : l;
      links[keep]!.set(c, joined);
      links[c]!.set(keep, joined);
      offer(keep, c, joined);
    }
    links[gone]!.clear();
  }

  return members.filter((m, i) => alive[i] && m.length > 0).map((m) => m.sort((x, y) => x - y));
}

/**
 * Candidates, the most alike first; among equals the pair of earlier items (a, then b). In
 * typed arrays, not objects: a big report offers hundreds of thousands.
 */
class MaxHeap {
  private value = new Float64Array(256);
  private a = new Int32Array(256);
  private b = new Int32Array(256);
  size = 0;

  push(value: number, a: number, b: number): void {
    if (this.size === this.value.length) this.grow();
    let i = this.size++;
    this.put(i, value, a, b);
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!this.before(i, parent)) break;
      this.swap(i, parent);
      i = parent;
    }
  }

  /** The best candidate; only when `size` > 0. */
  pop(): Candidate {
    const top = { value: this.value[0]!, a: this.a[0]!, b: this.b[0]! };
    const last = --this.size;
    this.put(0, this.value[last]!, this.a[last]!, this.b[last]!);
    for (let i = 0; ; ) {
      const [l, r] = [2 * i + 1, 2 * i + 2];
      let best = i;
      if (l < this.size && this.before(l, best)) best = l;
      if (r < this.size && this.before(r, best)) best = r;
      if (best === i) break;
      this.swap(i, best);
      i = best;
    }
    return top;
  }

  private before(i: number, j: number): boolean {
    const [v, w] = [this.value[i]!, this.value[j]!];
    if (v !== w) return v > w;
    return this.a[i] !== this.a[j] ? this.a[i]! < this.a[j]! : this.b[i]! < this.b[j]!;
  }

  private put(i: number, value: number, a: number, b: number): void {
    this.value[i] = value;
    this.a[i] = a;
    this.b[i] = b;
  }

  private swap(i: number, j: number): void {
    const [v, a, b] = [this.value[i]!, this.a[i]!, this.b[i]!];
    this.put(i, this.value[j]!, this.a[j]!, this.b[j]!);
    this.put(j, v, a, b);
  }

  private grow(): void {
    const n = this.value.length * 2;
    const value = new Float64Array(n);
    value.set(this.value);
    const a = new Int32Array(n);
    a.set(this.a);
    const b = new Int32Array(n);
    b.set(this.b);
    [this.value, this.a, this.b] = [value, a, b];
  }
}
