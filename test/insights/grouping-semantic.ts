import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { EmbeddingsClient } from '../../src/api/embeddings.ts';
import type { Logger } from '../../src/log.ts';
import type { GroupingOptions } from '../../src/insights/topics.ts';
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
