import { expect, it } from 'vitest';
import { aggregateInput } from '../../bench/report.ts';
import { compareRows, dedupeAndSortSteps, moversSteps } from '../../src/reports/aggregate.ts';
import { pagesCsvSteps } from '../../src/reports/csv.ts';
import { drain, inTurns, sortSteps, TURN_ROWS } from '../../src/reports/turns.ts';

/** How many other turns of the event loop ran while `work` did. */
async function turnsBeside<T>(work: () => Promise<T>): Promise<{ value: T; others: number }> {
  let others = 0;
  let done = false;
  const tick = () => {
    if (done) return;
    others++;
    setImmediate(tick);
  };
  setImmediate(tick);
  const value = await work();
  done = true;
  return { value, others };
}

it('sorts like the native stable sort, in steps', () => {
  const rows = Array.from({ length: 3 * TURN_ROWS + 17 }, (_, i) => ({
    key: (i * 7919) % 101,
    i,
  }));
  const cmp = (a: { key: number }, b: { key: number }) => a.key - b.key;
  expect(drain(sortSteps(rows, cmp))).toEqual([...rows].sort(cmp));
  expect(drain(sortSteps([], cmp))).toEqual([]);
});

it('builds a 50,000-page report with the event loop free between steps', async () => {
  const { current, previous } = aggregateInput(50_000);
  const sorted = await turnsBeside(() => inTurns(dedupeAndSortSteps(current)));
  // Same answer as run straight through, and other work ran all along the way.
  expect(sorted.value).toEqual(drain(dedupeAndSortSteps(current)));
  expect(sorted.value.every((r, i, xs) => i === 0 || compareRows(xs[i - 1]!, r) <= 0)).toBe(true);
  expect(sorted.others).toBeGreaterThanOrEqual(20);
  const before = new Map(previous.map((r) => [r.path, r]));
  const opts = { floor: 20, minAbs: 5, limit: 5, currentComplete: true, previousComplete: true };
  const moved = await turnsBeside(() => inTurns(moversSteps(sorted.value, before, opts)));
  expect(moved.others).toBeGreaterThanOrEqual(20);
  const csv = await turnsBeside(() => inTurns(pagesCsvSteps(sorted.value, before, true)));
  expect(csv.others).toBeGreaterThanOrEqual(20);
});
