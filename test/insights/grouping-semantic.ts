import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { EmbeddingsClient } from '../../src/api/embeddings.ts';
import type { GroupingOptions } from '../../src/insights/topics.ts';
import type { Logger } from '../../src/log.ts';
import { grouping, type Method } from './grouping-eval.ts';

/**
 * Semantic grouping on the labelled sets (`npm run eval:grouping -- --embeddings local` or
 * `--embeddings-url URL`): the texts' vectors asked once from an OpenAI-compatible endpoint,
 * through the bot's own client (src/api/embeddings.ts), then grouped as /insights groups them.
 */

/** Vectors by text (trimmed, as the grouping looks them up), asked in the client's batches. */
export async function vectorsOf(
  texts: readonly string[],
  client: EmbeddingsClient,
): Promise<Map<string, Float32Array>> {
  const distinct = [...new Set(texts.map((t) => t.trim()))];
  const vectors = await client.embed(distinct);
  return new Map(distinct.map((t, i) => [t, vectors[i]!]));
}

/** The default grouping with vectors (a text without one is compared by its words). */
export function semanticGrouping(
  name: string,
  vectors: ReadonlyMap<string, Float32Array>,
  over: Partial<GroupingOptions> = {},
): Method {
  return grouping(name, { vectors: (t) => vectors.get(t), ...over });
}

export function embeddingsClient(o: {
  url: string;
  key?: string | undefined;
  model: string;
  log: Logger;
}): EmbeddingsClient {
  return new EmbeddingsClient({ baseUrl: o.url, apiKey: o.key, model: o.model, log: o.log });
}

/**
 * Starts scripts/embeddings-local.ts (the Universal Sentence Encoder lite) on a free port of
 * 127.0.0.1; resolves once its model is loaded, with its base URL and a stop.
 */
export async function startLocalEmbeddings(): Promise<{ url: string; stop: () => Promise<void> }> {
  const script = new URL('../../scripts/embeddings-local.ts', import.meta.url).pathname;
  const child = spawn(process.execPath, [script, '--port', '0'], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const url = await new Promise<string>((resolve, reject) => {
    const lines = createInterface({ input: child.stdout });
    lines.once('line', (line) => {
      const m = /^embeddings: (\S+)/.exec(line);
      if (m) resolve(m[1]!);
      else reject(new Error(`embeddings-local said: ${line}`));
    });
    child.once('exit', (code) => reject(new Error(`embeddings-local exited (${code})`)));
  });
  return {
    url,
    stop: async () => {
      child.kill('SIGTERM');
      await exited;
    },
  };
}

/** Weights and zeros compared on sets A and B (the threshold stays INSIGHTS_SIMILARITY's). */
export const SEMANTIC_GRID = {
  weights: [0.3, 0.4, 0.5, 0.6, 0.8],
  zeros: [0.2, 0.3, 0.4, 0.5, 0.6, 0.7],
};

/**
 * How well the vectors alone rank the pairs only meaning could join (one intent, no shared
 * term after normalisation) above pairs of different intents: the area under the ROC curve
 * (0.5 = chance, 1 = every such pair above every other).
 */
export function meaningAuc(
  set: readonly { text: string; intent: string }[],
  vectors: ReadonlyMap<string, Float32Array>,
  termsOf: (text: string) => string[],
): number {
  const terms = set.map((q) => termsOf(q.text));
  const unit = set.map((q) => {
    const v = vectors.get(q.text.trim())!;
    const n = Math.hypot(...v);
    return v.map((x) => x / n);
  });
  const [meaning, other]: number[][] = [[], []];
  for (let i = 0; i < set.length; i++)
    for (let j = i + 1; j < set.length; j++) {
      const c = unit[i]!.reduce((s, x, k) => s + x * unit[j]![k]!, 0);
      if (set[i]!.intent !== set[j]!.intent) other!.push(c);
      else if (!terms[i]!.some((t) => terms[j]!.includes(t))) meaning!.push(c);
    }
  other!.sort((a, b) => a - b);
  const below = (x: number) => {
    let [lo, hi] = [0, other!.length];
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (other![mid]! < x) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  };
  return meaning!.reduce((s, x) => s + below(x), 0) / (meaning!.length * other!.length);
}
