import { describe, expect, it } from 'vitest';
import { evaluate, grouping, lexicalCeiling, METHODS, mixes, score } from './grouping-eval.ts';
import { HOLDOUT_SET } from './grouping-holdout.ts';
import { HOLDOUT_SET_C, KEPT_APART_C } from './grouping-holdout-c.ts';
import { GROUPING_SET, KEPT_APART } from './grouping-set.ts';

/**
 * The outcome of grouping on the labelled sets (docs/grouping.md has the figures of every
 * method). The floors are the default's measured figures, a little under: a change that makes
 * grouping worse on any set fails here. The target, F1 0.8, is not met: on these
 * sets only meaning could join much of what words do not (see the ceiling below). Set C was
 * written before the last changes and never tuned on: its floor is what they measured on it.
 */
describe('grouping, measured on labelled questions', () => {
  const defaults = grouping('default');
  const old = METHODS[0]!;

  it('measures a set as large and as varied as the issue asks', () => {
    for (const set of [GROUPING_SET, HOLDOUT_SET, HOLDOUT_SET_C]) {
      expect(set.length).toBeGreaterThanOrEqual(set === HOLDOUT_SET_C ? 60 : 80);
      expect(new Set(set.map((q) => q.intent)).size).toBeGreaterThanOrEqual(12);
      expect(new Set(set.map((q) => q.text.toLowerCase())).size).toBe(set.length);
    }
  });

  it('scores pairs: precision, recall, F1 and the adjusted Rand index', () => {
    const labels = ['a', 'a', 'a', 'b', 'b'];
    expect(
      score(labels, [
        [0, 1, 2],
        [3, 4],
      ]),
    ).toMatchObject({ precision: 1, recall: 1, f1: 1, ari: 1 });
    const split = score(labels, [[0, 1], [2], [3, 4]]);
    expect([split.precision, split.recall]).toEqual([1, 0.5]);
    const lumped = score(labels, [[0, 1, 2, 3, 4]]);
    expect([lumped.precision, lumped.recall, lumped.ari]).toEqual([0.4, 1, 0]);
  });

  it('finds the intents of set A far better than the old rule', () => {
    const s = evaluate(defaults, GROUPING_SET);
    expect(s.f1).toBeGreaterThanOrEqual(0.785);
    expect(s.precision).toBeGreaterThanOrEqual(0.98);
    expect(s.f1).toBeGreaterThan(4 * evaluate(old, GROUPING_SET).f1);
  });

  it('holds up on set B (held out until the synonym table grew, then used with A to keep its groups)', () => {
    const s = evaluate(defaults, HOLDOUT_SET);
    expect(s.f1).toBeGreaterThanOrEqual(0.71);
    expect(s.precision).toBeGreaterThanOrEqual(0.93);
    expect(s.f1).toBeGreaterThan(4 * evaluate(old, HOLDOUT_SET).f1);
  });

  it('holds up on set C, written before the last changes and never tuned on', () => {
    const s = evaluate(defaults, HOLDOUT_SET_C);
    expect(s.f1).toBeGreaterThanOrEqual(0.42);
    expect(s.precision).toBeGreaterThanOrEqual(0.85);
    expect(mixes(defaults, ...KEPT_APART_C, HOLDOUT_SET_C)).toBe(false);
  });

  it('keeps rotating a key and deleting one apart', () => {
    expect(mixes(defaults, ...KEPT_APART)).toBe(false);
  });

  it('stays under what words alone could reach', () => {
    for (const set of [GROUPING_SET, HOLDOUT_SET, HOLDOUT_SET_C])
      expect(evaluate(defaults, set).f1).toBeLessThanOrEqual(lexicalCeiling(set).f1);
  });
});
