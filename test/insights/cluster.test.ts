import { describe, expect, it } from 'vitest';
import { agglomerate, type Linkage } from '../../src/insights/cluster.ts';
import { Edges, type Item, similarityEdges } from '../../src/insights/vectors.ts';
import { drain } from '../../src/reports/turns.ts';
import { Prng } from '../chaos/prng.ts';

/** A deterministic random number generator, the chaos runs' seeded one. */
function random(seed: number) {
  const prng = new Prng(seed);
  return () => prng.next();
}

/**
 * The clustering as docs/grouping.md states it, with nothing clever: every pair of clusters
 * compared after every join, the most alike (earliest pair among equals) joined while at
 * least `threshold` alike and not of two categories.
 */
function byTheBook(
  weights: number[],
  categories: (string | null)[],
  sim: number[][],
  threshold: number,
  linkage: Linkage,
): number[][] {
  let clusters = weights.map((_, i) => ({ members: [i], id: i, category: categories[i] ?? null }));
  for (;;) {
    let best: { v: number; x: number; y: number } | undefined;
    for (let x = 0; x < clusters.length; x++)
      for (let y = x + 1; y < clusters.length; y++) {
        const [p, q] = [clusters[x]!, clusters[y]!];
        if (p.category && q.category && p.category !== q.category) continue;
        let [sum, size, min, max] = [0, 0, Number.POSITIVE_INFINITY, 0];
        for (const i of p.members)
          for (const j of q.members) {
            const w = weights[i]! * weights[j]!;
            sum += sim[i]![j]! * w;
            size += w;
            min = Math.min(min, sim[i]![j]!);
            max = Math.max(max, sim[i]![j]!);
          }
        const v = linkage === 'average' ? sum / size : linkage === 'complete' ? min : max;
        const ids = (c: typeof p, d: typeof q) => [Math.min(c.id, d.id), Math.max(c.id, d.id)];
        const [a, b] = ids(p, q);
        const better =
          !best ||
          v > best.v ||
          (v === best.v &&
            (() => {
              const [ba, bb] = ids(clusters[best!.x]!, clusters[best!.y]!);
              return a! < ba! || (a === ba && b! < bb!);
            })());
        if (better) best = { v, x, y };
      }
    if (!best || best.v < threshold) break;
    const [p, q] = [clusters[best.x]!, clusters[best.y]!];
    const keep = {
      members: [...p.members, ...q.members],
      id: -1,
      category: p.category ?? q.category,
    };
    // The joined cluster is named like the code names it: by one of the two, which it keeps.
    keep.id = Math.min(p.id, q.id);
    clusters = [...clusters.filter((_, i) => i !== best!.x && i !== best!.y), keep];
  }
  return clusters.map((c) => c.members.sort((a, b) => a - b)).sort((a, b) => a[0]! - b[0]!);
}

describe('agglomerative clustering', () => {
  const rnd = random(11);
  const n = 40;
  // Similarities on a grid of 0.05 steps, many ties on purpose; a third of the pairs unlinked.
  const sim = Array.from({ length: n }, () => new Array<number>(n).fill(0));
  const edges = new Edges();
  for (let a = 0; a < n; a++)
    for (let b = a + 1; b < n; b++) {
      if (rnd() < 0.33) continue;
      const s = Math.round(rnd() * 20) / 20;
      if (s === 0) continue;
      sim[a]![b] = sim[b]![a] = s;
      edges.push(a, b, s);
    }
  const weights = Array.from({ length: n }, () => 1 + Math.floor(rnd() * 3));
  const categories = Array.from({ length: n }, () =>
    rnd() < 0.5 ? null : rnd() < 0.5 ? 'x' : 'y',
  );

  for (const linkage of ['average', 'complete', 'single'] as const)
    for (const threshold of [0.3, 0.5, 0.7])
      it(`joins what comparing every pair of clusters joins (${linkage}, ${threshold})`, () => {
        const found = drain(agglomerate(weights, categories, edges, threshold, linkage)).sort(
          (a, b) => a[0]! - b[0]!,
        );
        // Ids differ only in which of two joined clusters names the result, so compare sets.
        const expected = byTheBook(weights, categories, sim, threshold, linkage);
        expect(found.map((c) => c.join(','))).toEqual(expected.map((c) => c.join(',')));
      });
});

describe('similarity edges', () => {
  const items: Item[] = [
    { terms: ['key', 'rotat'], category: 'API keys', weight: 3 },
    { terms: ['delet', 'key'], category: 'API keys', weight: 1 },
    { terms: ['key', 'rotat'], category: 'Security', weight: 1 },
    { terms: ['sso'], category: null, weight: 1 },
    { terms: ['okta', 'sso'], category: null, weight: 1 },
  ];
  const options = {
    floor: 0.01,
    neighbours: 10,
    categories: true,
    sameCategoryFactor: 1,
    idfPower: 3,
  };
  const pairs = (e: Edges) =>
    Array.from({ length: e.length }, (_, i) => [e.a[i], e.b[i], +e.similarity[i]!.toFixed(3)]);

  it('links only pairs that share a term, never across two categories', () => {
    const found = pairs(drain(similarityEdges(items, options)));
    expect(found.map(([a, b]) => [a, b])).toEqual([
      [0, 1],
      [3, 4],
    ]);
    // Unweighted they share half their terms (0.5); weighted, the common `key` counts less.
    expect(found[0]![2]).toBeLessThan(0.35);
    const ignoring = pairs(drain(similarityEdges(items, { ...options, categories: false })));
    expect(ignoring.find(([a, b]) => a === 0 && b === 2)?.[2]).toBe(1);
  });

  it('keeps each item’s strongest links only', () => {
    const star: Item[] = Array.from({ length: 12 }, (_, i) => ({
      terms: i === 0 ? ['hub'] : ['hub', `own${i}`],
      category: null,
      weight: 1,
    }));
    const all = drain(similarityEdges(star, { ...options, floor: 0, neighbours: 100 }));
    const few = drain(similarityEdges(star, { ...options, floor: 0, neighbours: 2 }));
    expect(all.length).toBe(66);
    // Every leaf keeps its 2 best (the hub and one leaf): at most 2 × 11 links, all the hub's.
    expect(few.length).toBeLessThan(all.length);
    expect(pairs(few).filter(([a]) => a === 0)).toHaveLength(11);
  });
});
