import { z } from 'zod';
import type { Logger } from '../log.ts';
import type { ApiMetrics, RetryOptions } from './call.ts';
import { MalformedResponse } from './errors.ts';
import { Transport } from './transport.ts';

/**
 * A team's own embeddings endpoint, OpenAI-compatible (`POST {base}/embeddings` with
 * `{model, input: string[]}`, answering `data[].embedding` and `data[].index`), for grouping
 * questions by meaning (src/insights/embeddings.ts). It goes through the one transport
 * (transport.ts): typed errors, a timeout per attempt, and the one retry table, where it is
 * a `computing POST` (it acts on nothing, so a 5xx or a timeout is asked again, and a 429's
 * Retry-After is waited out). It takes no budget: the analytics and agent budgets count
 * Mintlify's requests, and none of these is one.
 */

/** Texts per request: OpenAI takes up to 2,048; a small local server is kinder to 256. */
export const EMBEDDINGS_BATCH = 256;
/** Per attempt: a batch of 256 short texts takes a second or two on a CPU server. */
export const EMBEDDINGS_TIMEOUT_MS = 20_000;
/** Two more attempts, quick: a report waits on them. */
export const EMBEDDINGS_RETRY: RetryOptions = {
  retries: 2,
  minDelayMs: 500,
  maxDelayMs: 4_000,
  maxRetryAfterMs: 10_000,
};
export const EMBEDDINGS_OPERATION = 'embeddings.create';

/** The part of OpenAI's answer the bot reads; anything else in it is ignored. */
export const EmbeddingsAnswer = z.object({
  data: z.array(
    z.object({
      index: z.number().int().nonnegative(),
      embedding: z.array(z.number()).min(1),
    }),
  ),
});

export interface EmbeddingsClientOptions {
  /** The base URL, e.g. https://api.openai.com/v1 (the bot POSTs `{base}/embeddings`). */
  baseUrl: string;
  /** Sent as `Authorization: Bearer …`; none when unset (a local server). */
  apiKey?: string | undefined;
  model: string;
  log: Logger;
  timeoutMs?: number;
  retry?: Partial<RetryOptions>;
  metrics?: ApiMetrics;
}

export class EmbeddingsClient {
  readonly model: string;
  readonly #transport: Transport;

  constructor(o: EmbeddingsClientOptions) {
    this.model = o.model;
    this.#transport = new Transport({
      baseUrl: o.baseUrl.replace(/\/+$/, ''),
      apiKey: o.apiKey ?? '',
      log: o.log,
      timeoutMs: o.timeoutMs ?? EMBEDDINGS_TIMEOUT_MS,
      retry: { ...EMBEDDINGS_RETRY, ...o.retry },
      ...(o.metrics ? { metrics: o.metrics } : {}),
    });
  }

  /** Cuts every call in flight short (`Stopped`), and every later one. */
  stop(): void {
    this.#transport.stop();
  }

  /**
   * One vector per text, in order, in requests of at most `EMBEDDINGS_BATCH` texts; every
   * vector has the same number of dimensions, or the answer is `MalformedResponse`.
   */
  async embed(
    texts: readonly string[],
    opts: { signal?: AbortSignal; onRequest?: () => void } = {},
  ): Promise<Float32Array[]> {
    const out: Float32Array[] = [];
    for (let i = 0; i < texts.length; i += EMBEDDINGS_BATCH) {
      const batch = texts.slice(i, i + EMBEDDINGS_BATCH);
      opts.onRequest?.();
      const answer = await this.#transport.call({
        operation: EMBEDDINGS_OPERATION,
        method: 'POST',
        computes: true,
        path: '/embeddings',
        project: '',
        body: { model: this.model, input: batch },
        schema: EmbeddingsAnswer,
        what: `The embeddings model ${this.model} (or the URL)`,
        budget: undefined,
        signal: opts.signal,
      });
      out.push(...inOrder(answer, batch.length, out[0]?.length));
    }
    return out;
  }
}

/** The answer's vectors by `index`: one per text, each as long as `dims` (the first's). */
function inOrder(
  answer: z.infer<typeof EmbeddingsAnswer>,
  count: number,
  dims = answer.data[0]?.embedding.length,
): Float32Array[] {
  const bad = (problem: string) => new MalformedResponse(EMBEDDINGS_OPERATION, 200, problem);
  if (answer.data.length !== count) throw bad(`${answer.data.length} vectors for ${count} texts`);
  const vectors = new Array<Float32Array | undefined>(count);
  for (const { index, embedding } of answer.data) {
    if (index >= count || vectors[index]) throw bad(`index ${index} out of place`);
    if (embedding.length !== dims)
      throw bad(`a vector of ${embedding.length} dimensions among vectors of ${dims}`);
    vectors[index] = Float32Array.from(embedding);
  }
  return vectors as Float32Array[];
}
