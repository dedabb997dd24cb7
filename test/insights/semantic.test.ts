import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cosinePairs } from '../../src/insights/semantic.ts';
import { groupTopics, type TopicInput } from '../../src/insights/topics.ts';
import { drain } from '../../src/reports/turns.ts';
import { OUTAGE_QUESTIONS } from '../fakes/analytics-insights-hostile.ts';
import { DELETE_KEY_QUESTIONS, ROTATE_KEY_QUESTIONS } from '../fakes/analytics-insights-seed.ts';
import { FakeEmbeddings } from '../fakes/embeddings.ts';

/** Grouping by meaning as well as words, with the fake endpoint's vectors. */

let fake: FakeEmbeddings;
beforeAll(async () => {
  fake = await FakeEmbeddings.start();
});
afterAll(() => fake.close());

const vectors = (t: string) => Float32Array.from(fake.vectorOf(t));
const texts = (inputs: TopicInput[], withVectors: boolean) =>
  groupTopics(inputs, {
    threshold: 0.3,
    synonyms: [],
    ...(withVectors ? { vectors } : {}),
  }).map((t) => t.variants.map((v) => v.text).sort());

describe('semantic grouping', () => {
  const inputs: TopicInput[] = [
    ...OUTAGE_QUESTIONS.map((text) => ({ text, category: 'Status' })),
    { text: 'Can I book a demo with sales?', category: 'Status' },
    ...ROTATE_KEY_QUESTIONS.map((text) => ({ text, category: 'API keys' })),
    ...DELETE_KEY_QUESTIONS.map((text) => ({ text, category: 'API keys' })),
  ];

  it('joins paraphrases that share no word only with vectors, and keeps other needs apart', () => {
    const outage = [...OUTAGE_QUESTIONS].sort();
    expect(texts(inputs, false)).not.toContainEqual(outage);
    const grouped = texts(inputs, true);
    expect(grouped).toContainEqual(outage);
    expect(grouped).toContainEqual(['Can I book a demo with sales?']);
    for (const g of [texts(inputs, false), grouped])
      expect(g).toContainEqual([...DELETE_KEY_QUESTIONS].sort());
  });

  it('never joins two categories, however alike their vectors', () => {
    const same = [
      { text: 'Is the API down?', category: 'Status' },
      { text: 'any outage today', category: 'Billing' },
    ];
    expect(texts(same, true)).toHaveLength(2);
    expect(
      texts(
        same.map((s) => ({ text: s.text })),
        true,
      ),
    ).toHaveLength(1);
  });

  it('compares every pair of vectors, blocked, as a plain double loop would', () => {
    const random = seeded(3);
    const vs = Array.from({ length: 70 }, (_, i) =>
      i % 9 === 0 ? null : Float32Array.from({ length: 24 }, () => random() - 0.5),
    );
    const unit = vs.map((v) => v?.map((x) => x / Math.hypot(...v)) ?? null);
    const expected: string[] = [];
    for (let a = 0; a < vs.length; a++)
      for (let b = a + 1; b < vs.length; b++) {
        const [x, y] = [unit[a], unit[b]];
        if (x && y && x.reduce((s, xi, k) => s + xi * y[k]!, 0) >= 0.2) expected.push(`${a}-${b}`);
      }
    const got: string[] = [];
    drain(cosinePairs(vs, 0.2, (a, b) => got.push(`${a}-${b}`)));
    expect(got.sort()).toEqual(expected.sort());
    expect(got.length).toBeGreaterThan(100);
  });

  it('gives the event loop back in steps of a few milliseconds over thousands of vectors', () => {
    const random = seeded(5);
    const vs = Array.from({ length: 2_000 }, () =>
      Float32Array.from({ length: 256 }, () => random() - 0.5),
    );
    const steps = cosinePairs(vs, 0.99, () => {});
    const started = performance.now();
    let [longest, count] = [0, 0];
    for (;;) {
      const t = performance.now();
      const r = steps.next();
      longest = Math.max(longest, performance.now() - t);
      count++;
      if (r.done) break;
    }
    // Steps of ~5 ms: a busy machine (a GC, another process) stretches one now and then, so
    // the bound is relative to the whole: without the yields one step is all of it.
    const total = performance.now() - started;
    expect(count).toBeGreaterThan(10);
    expect(longest).toBeLessThan(Math.max(40, total / 5));
  });
});

function seeded(seed: number) {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = Math.imul(s ^ (s >>> 15), 1 | s);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
