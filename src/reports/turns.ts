/**
 * CPU-bound report work in small steps. A step function is a generator that yields after
 * every `TURN_ROWS` rows or so; `drain` runs it straight through (tests, benchmarks), and
 * `inTurns` gives the event loop back between steps (setImmediate), so that building a big
 * report (50,000 pages: dedupe, sort, movers, CSV) never holds an ack or an answer for
 * longer than one step, a few milliseconds.
 */

/** Rows handled between two yields: a millisecond or two of work on a busy core. */
export const TURN_ROWS = 2_000;

export type Steps<T> = Generator<void, T, void>;

/** Runs every step now. */
export function drain<T>(steps: Steps<T>): T {
  for (;;) {
    const r = steps.next();
    if (r.done) return r.value;
  }
}

const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

/** Runs the steps one per turn of the event loop. */
export async function inTurns<T>(steps: Steps<T>): Promise<T> {
  for (;;) {
    const r = steps.next();
    if (r.done) return r.value;
    await turn();
  }
}

/** Yields every `TURN_ROWS` items of `xs` after `each` has seen them. */
export function* eachStep<T>(xs: Iterable<T>, each: (x: T) => void): Steps<void> {
  let n = 0;
  for (const x of xs) {
    each(x);
    if (++n % TURN_ROWS === 0) yield;
  }
}

/**
 * A stable merge sort in steps: runs of `TURN_ROWS` sorted natively, then merged pairwise,
 * yielding every `TURN_ROWS` rows merged. Returns a new array.
 */
export function* sortSteps<T>(xs: readonly T[], cmp: (a: T, b: T) => number): Steps<T[]> {
  let runs: T[][] = [];
  for (let i = 0; i < xs.length; i += TURN_ROWS) {
    runs.push(xs.slice(i, i + TURN_ROWS).sort(cmp));
    if (i + TURN_ROWS < xs.length) yield;
  }
  while (runs.length > 1) {
    const next: T[][] = [];
    for (let i = 0; i < runs.length; i += 2) {
      const [a, b] = [runs[i]!, runs[i + 1]];
      next.push(b ? yield* mergeSteps(a, b, cmp) : a);
    }
    runs = next;
  }
  return runs[0] ?? [];
}

function* mergeSteps<T>(a: T[], b: T[], cmp: (a: T, b: T) => number): Steps<T[]> {
  const out = new Array<T>(a.length + b.length);
  let i = 0;
  let j = 0;
  let k = 0;
  while (k < out.length) {
    const stop = Math.min(out.length, k + TURN_ROWS);
    while (k < stop) {
      // Ties take `a` first: the merge keeps the order of equal rows.
      out[k++] = j >= b.length || (i < a.length && cmp(a[i]!, b[j]!) <= 0) ? a[i++]! : b[j++]!;
    }
    if (k < out.length) yield;
  }
  return out;
}
