import { ApiError } from '../api/errors.ts';
import type { Check } from './check.ts';

/**
 * The doctor's line for INSIGHTS_EMBEDDINGS_URL: off, or one request of one text to the
 * team's endpoint (it spends no analytics request and no agent use), with the fix for each
 * way it fails. A failing endpoint never fails a report: its questions are grouped by words.
 */

export interface EmbeddingsProbe {
  model: string;
  /** Asks for one text's vector; resolves with its length, or throws the client's errors. */
  probe(): Promise<number>;
}

const NAME = 'Embeddings endpoint';

const FIX: Partial<Record<ApiError['kind'], string>> = {
  unauthorized: 'set INSIGHTS_EMBEDDINGS_KEY to a key the endpoint accepts',
  forbidden: 'give INSIGHTS_EMBEDDINGS_KEY access to the embeddings model',
  not_found:
    'set INSIGHTS_EMBEDDINGS_URL to the base URL (e.g. https://api.openai.com/v1; the bot POSTs {base}/embeddings) and INSIGHTS_EMBEDDINGS_MODEL to a model it serves',
  invalid_request: 'check INSIGHTS_EMBEDDINGS_MODEL: the endpoint refused the request',
  malformed:
    'point INSIGHTS_EMBEDDINGS_URL at an OpenAI-compatible endpoint (data[].embedding, data[].index)',
};

export async function checkEmbeddings(e: EmbeddingsProbe | undefined): Promise<Check> {
  if (!e)
    return {
      name: NAME,
      ok: true,
      detail: 'off (INSIGHTS_EMBEDDINGS_URL unset): questions are grouped by their words',
    };
  const started = performance.now();
  try {
    const dims = await e.probe();
    const ms = Math.round(performance.now() - started);
    return {
      name: NAME,
      ok: true,
      detail: `${e.model} answered a vector of ${dims} dimensions in ${ms} ms (one request of one text; no analytics request, no agent use)`,
    };
  } catch (err) {
    const kind = err instanceof ApiError ? err.kind : undefined;
    return {
      name: NAME,
      ok: false,
      detail: `${err instanceof Error ? err.message : String(err)}; until it answers, questions are grouped by their words`,
      fix:
        (kind && FIX[kind]) ??
        'check that this machine reaches INSIGHTS_EMBEDDINGS_URL and that the endpoint is up',
    };
  }
}
