/**
 * `npm run eval:grouping`: how well each grouping method finds the intents of the labelled
 * sets (test/insights/grouping-set.ts, grouping-holdout.ts, and grouping-holdout-c.ts, which
 * no choice was made on), and how long
 * the default takes on 1,000 and 5,000 distinct texts (`--quick` leaves the timing out).
 * With an embeddings endpoint (`--embeddings local`, `--embeddings-url URL [--embeddings-model
 * M]`, or INSIGHTS_EMBEDDINGS_URL), the semantic grouping too (scripts/eval-semantic.ts).
 * The method and its figures: docs/grouping.md.
 */
import { DEFAULT_GROUPING } from '../src/insights/topics.ts';
import {
  evaluate,
  grouping,
  lexicalCeiling,
  METHODS,
  mixes,
  type Scores,
  THRESHOLDS,
  timeGrouping,
  timingCorpus,
} from '../test/insights/grouping-eval.ts';
import { HOLDOUT_SET } from '../test/insights/grouping-holdout.ts';
import { HOLDOUT_SET_C, KEPT_APART_C } from '../test/insights/grouping-holdout-c.ts';
import { GROUPING_SET, KEPT_APART, type LabelledQuestion } from '../test/insights/grouping-set.ts';
import { embeddingsChoice, evalSemantic } from './eval-semantic.ts';

const f = (x: number) => x.toFixed(3);
const row = (s: Scores) =>
  `${f(s.precision)}  ${f(s.recall)}  ${f(s.f1)}  ${f(s.ari)}  ${String(s.topics).padStart(4)}`;
const describe = (name: string, set: readonly LabelledQuestion[]) =>
  `${name}: ${set.length} questions, ${new Set(set.map((q) => q.intent)).size} intents`;

console.log(
  `${describe('Set A (grouping-set.ts)', GROUPING_SET)}; ${describe('set B, held out (grouping-holdout.ts)', HOLDOUT_SET)}; ${describe('set C, held out, never tuned on (grouping-holdout-c.ts)', HOLDOUT_SET_C)}.`,
);
console.log('Pairwise precision, recall, F1, adjusted Rand index, topics made.\n');
console.log(
  `${'method'.padEnd(56)}${'A: P      R      F1     ARI    topics'.padEnd(40)}${'B: P      R      F1     ARI    topics'.padEnd(40)}${'C: P      R      F1     ARI    topics'.padEnd(40)}rotate/delete, C: delete/rename page`,
);
const apartOf = (m: Parameters<typeof mixes>[0]) =>
  `${mixes(m, ...KEPT_APART) ? 'MIXED' : 'apart'}, ${mixes(m, ...KEPT_APART_C, HOLDOUT_SET_C) ? 'MIXED' : 'apart'}`;
for (const m of METHODS) {
  console.log(
    `${m.name.padEnd(56)}${row(evaluate(m, GROUPING_SET)).padEnd(40)}${row(evaluate(m, HOLDOUT_SET)).padEnd(40)}${row(evaluate(m, HOLDOUT_SET_C)).padEnd(40)}${apartOf(m)}`,
  );
}
console.log(
  `${'ceiling: same intent and a shared term (no method)'.padEnd(56)}${row(lexicalCeiling(GROUPING_SET)).padEnd(40)}${row(lexicalCeiling(HOLDOUT_SET)).padEnd(40)}${row(lexicalCeiling(HOLDOUT_SET_C))}`,
);

console.log(
  `\nThe default at other thresholds (INSIGHTS_SIMILARITY, default ${DEFAULT_GROUPING.threshold}):`,
);
for (const threshold of THRESHOLDS) {
  const m = grouping('', { threshold });
  console.log(
    `  ${threshold.toFixed(2)}  A ${row(evaluate(m, GROUPING_SET))}   B ${row(evaluate(m, HOLDOUT_SET))}   C ${row(evaluate(m, HOLDOUT_SET_C))}   ${apartOf(m)}`,
  );
}

if (!process.argv.includes('--quick')) {
  console.log(
    '\nTiming the default in steps, as /insights runs it (best of 3; longest step of all 3):',
  );
  for (const n of [1_000, 5_000]) {
    const corpus = timingCorpus(n);
    const runs = [0, 1, 2].map(() => timeGrouping(corpus));
    const best = runs.reduce((a, b) => (b.ms < a.ms ? b : a));
    const longest = Math.max(...runs.map((r) => r.longestStepMs));
    console.log(
      `  ${n} distinct texts: ${best.ms.toFixed(0)} ms in ${best.steps} steps, longest step ${longest.toFixed(1)} ms, ${best.topics} topics`,
    );
  }
}

const endpoint = embeddingsChoice(process.argv.slice(2));
if (endpoint) await evalSemantic(endpoint, row, !process.argv.includes('--quick'));
