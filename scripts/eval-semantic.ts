/**
 * The embeddings part of `npm run eval:grouping` (scripts/eval-grouping.ts): with an
 * endpoint (`--embeddings-url URL [--embeddings-model M]`, INSIGHTS_EMBEDDINGS_URL / _KEY /
 * _MODEL, or `--embeddings local` for scripts/embeddings-local.ts started here), the texts'
 * vectors are asked once through the bot's client, and the grouping with them is measured
 * beside the default, its weight and zero compared on sets A and B only, and timed on 1,000
 * and 3,000 texts whose vectors are at hand (as they are from the store's cache).
 */
import { parseArgs } from 'node:util';
import { prepare, termsOf } from '../src/insights/normalise.ts';
import { compileLexicon } from '../src/insights/synonyms.ts';
import { SEMANTIC } from '../src/insights/topics.ts';
import { createLogger } from '../src/log.ts';
import {
  evaluate,
  type Method,
  mixes,
  type Scores,
  timeGrouping,
  timingCorpus,
} from '../test/insights/grouping-eval.ts';
import { HOLDOUT_SET } from '../test/insights/grouping-holdout.ts';
import { HOLDOUT_SET_C, KEPT_APART_C } from '../test/insights/grouping-holdout-c.ts';
import {
  embeddingsClient,
  meaningAuc,
  SEMANTIC_GRID,
  semanticGrouping,
  startLocalEmbeddings,
  vectorsOf,
} from '../test/insights/grouping-semantic.ts';
import { GROUPING_SET, KEPT_APART } from '../test/insights/grouping-set.ts';

export interface EmbeddingsChoice {
  url: string | undefined;
  local: boolean;
  model: string;
  key: string | undefined;
}

/** The endpoint asked for on the command line or in the environment; undefined: none. */
export function embeddingsChoice(argv: string[], env = process.env): EmbeddingsChoice | undefined {
  const { values } = parseArgs({
    args: argv,
    strict: false,
    options: {
      embeddings: { type: 'string' },
      'embeddings-url': { type: 'string' },
      'embeddings-model': { type: 'string' },
    },
  });
  const local = values.embeddings === 'local';
  const url = (values['embeddings-url'] as string | undefined) ?? env.INSIGHTS_EMBEDDINGS_URL;
  if (!local && !url) return undefined;
  const model =
    (values['embeddings-model'] as string | undefined) ??
    (local ? 'use-lite' : (env.INSIGHTS_EMBEDDINGS_MODEL ?? 'text-embedding-3-small'));
  return {
    url: local ? undefined : url,
    local,
    model,
    key: local ? undefined : env.INSIGHTS_EMBEDDINGS_KEY,
  };
}

type Row = (s: Scores) => string;

export async function evalSemantic(choice: EmbeddingsChoice, row: Row, timing: boolean) {
  const local = choice.local ? await startLocalEmbeddings() : undefined;
  try {
    const url = local?.url ?? choice.url!;
    const log = createLogger({ level: 'silent', secrets: [choice.key] });
    const client = embeddingsClient({ url, key: choice.key, model: choice.model, log });
    const texts = [...GROUPING_SET, ...HOLDOUT_SET, ...HOLDOUT_SET_C].map((q) => q.text);
    const started = performance.now();
    const vectors = await vectorsOf(texts, client);
    const ms = performance.now() - started;
    const dims = vectors.values().next().value?.length ?? 0;
    console.log(
      `\nEmbeddings: ${choice.model} at ${local ? 'scripts/embeddings-local.ts' : 'the given URL'}, ${dims} dimensions; ${vectors.size} texts in ${ms.toFixed(0)} ms.`,
    );
    const chosen = semanticGrouping(
      `embeddings: max(TF-IDF, ${SEMANTIC.weight} x meaning), zero ${SEMANTIC.zero}`,
      vectors,
    );
    const apart = (m: Method) =>
      `${mixes(m, ...KEPT_APART) ? 'MIXED' : 'apart'}, ${mixes(m, ...KEPT_APART_C, HOLDOUT_SET_C) ? 'MIXED' : 'apart'}`;
    console.log(
      `${chosen.name.padEnd(56)}${row(evaluate(chosen, GROUPING_SET)).padEnd(40)}${row(evaluate(chosen, HOLDOUT_SET)).padEnd(40)}${row(evaluate(chosen, HOLDOUT_SET_C)).padEnd(40)}${apart(chosen)}`,
    );
    const lexicon = compileLexicon([]);
    const words = (t: string) => termsOf(prepare(t), lexicon);
    const auc = [GROUPING_SET, HOLDOUT_SET, HOLDOUT_SET_C].map((set) =>
      meaningAuc(set, vectors, words).toFixed(2),
    );
    console.log(
      `Pairs only meaning could join (one intent, no shared term), ranked by the vectors' cosine above pairs of two intents: AUC A ${auc[0]}, B ${auc[1]}, C ${auc[2]} (0.5 = chance).`,
    );
    console.log('\nWeight and zero, on sets A and B only (C is not used to choose):');
    for (const weight of SEMANTIC_GRID.weights)
      for (const zero of SEMANTIC_GRID.zeros) {
        const m = semanticGrouping('', vectors, { semantic: { weight, zero } });
        const a = evaluate(m, GROUPING_SET);
        const b = evaluate(m, HOLDOUT_SET);
        console.log(
          `  weight ${weight.toFixed(1)} zero ${zero.toFixed(1)}   A ${row(a)}   B ${row(b)}   rotate/delete ${mixes(m, ...KEPT_APART) ? 'MIXED' : 'apart'}`,
        );
      }
    if (timing) await timeSemantic(client);
  } finally {
    await local?.stop();
  }
}

/** Grouping n texts whose vectors are at hand, in steps, as /insights runs it. */
async function timeSemantic(client: ReturnType<typeof embeddingsClient>) {
  console.log('\nTiming with vectors at hand (best of 3; longest step of all 3):');
  for (const n of [1_000, 3_000]) {
    const corpus = timingCorpus(n);
    const vectors = await vectorsOf(
      corpus.map((t) => t.text),
      client,
    );
    const o = { vectors: (t: string) => vectors.get(t) };
    const runs = [0, 1, 2].map(() => timeGrouping(corpus, { threshold: 0.3, synonyms: [], ...o }));
    const best = runs.reduce((x, y) => (y.ms < x.ms ? y : x));
    const longest = Math.max(...runs.map((r) => r.longestStepMs));
    console.log(
      `  ${n} distinct texts: ${best.ms.toFixed(0)} ms in ${best.steps} steps, longest step ${longest.toFixed(1)} ms, ${best.topics} topics`,
    );
  }
}
