import { createHash } from 'node:crypto';
import { EMBEDDINGS_OPERATION } from '../api/embeddings.ts';
import { ApiError, type ApiErrorKind, MalformedResponse } from '../api/errors.ts';
import type { Logger } from '../log.ts';
import { redactPii } from '../redact-pii.ts';
import type { Store, WorkspaceRef } from '../store/types.ts';

/**
 * Sentence vectors of the texts being grouped, from a team's embeddings endpoint
 * (src/api/embeddings.ts), cached in the store by (model, SHA-256 of the text) so that a
 * text is asked once, whatever report, week or replica meets it again. Only masked text is
 * sent or hashed: the texts come masked from the sources (mask.ts), and are masked again
 * here (a no-op on masked text) so that nothing else can slip through. A failure (an error,
 * a timeout, an answer that cannot be read) is an outcome, never a throw: the report is
 * then grouped by its words, and says so (notes.ts).
 */

/** Vectors are kept this long after they were asked for, then pruned as new ones are written. */
export const VECTOR_DAYS = 90;
/** The whole step (every batch and its retries) gives up after this; the report goes on. */
export const EMBEDDINGS_DEADLINE_MS = 45_000;

/** What asks the endpoint (src/api/embeddings.ts's client). */
export interface Embedder {
  readonly model: string;
  embed(
    texts: readonly string[],
    opts?: { signal?: AbortSignal; onRequest?: () => void },
  ): Promise<Float32Array[]>;
}

/** Where one workspace's vectors are kept (the store's, bound to it by vectorCacheOf). */
export interface VectorCache {
  textVectors(model: string, hashes: readonly string[]): Promise<Map<string, string>>;
  putTextVectors(
    model: string,
    rows: readonly { hash: string; vector: string }[],
    now: number,
    pruneBefore: number,
  ): Promise<void>;
}

/** The store's vectors of workspace `ws` (its state scope, src/store/scope.ts). */
export function vectorCacheOf(
  store: Pick<Store, 'textVectors' | 'putTextVectors'>,
  ws: WorkspaceRef,
): VectorCache {
  return {
    textVectors: (model, hashes) => store.textVectors(ws, model, hashes),
    putTextVectors: (model, rows, now, pruneBefore) =>
      store.putTextVectors(ws, model, rows, now, pruneBefore),
  };
}

export interface EmbeddingsDeps {
  embedder: Embedder;
  /** Where vectors are kept across reports and replicas; none: every report asks again. */
  cache?: VectorCache | undefined;
  log: Logger;
  now?: () => number;
  deadlineMs?: number;
}

/** What the grouping got: vectors for every text, or why none (the report says so). */
export interface VectorsOutcome {
  model: string;
  /** Distinct texts that needed a vector, how many the cache had, requests sent. */
  texts: number;
  cached: number;
  requests: number;
  /** The texts' vectors by text (trimmed); undefined when the endpoint failed. */
  vectors?: ReadonlyMap<string, Float32Array>;
  failed?: { kind: ApiErrorKind | 'unexpected'; status?: number | undefined };
}

/** The text as sent and hashed: masked, spaces collapsed, lower case (how grouping dedupes). */
export const embeddingText = (text: string): string =>
  redactPii(text).trim().replace(/\s+/g, ' ').toLowerCase();

const hashOf = (text: string) => createHash('sha256').update(text).digest('hex');

/** Float32 values as base64 (little-endian), and back; a length not a multiple of 4 is none. */
export const packVector = (v: Float32Array): string =>
  Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString('base64');
export function unpackVector(s: string): Float32Array | undefined {
  const bytes = Buffer.from(s, 'base64');
  if (bytes.length === 0 || bytes.length % 4 !== 0) return undefined;
  const copy = new Uint8Array(bytes); // aligned, and the Buffer pool is left alone
  return new Float32Array(copy.buffer);
}

/** Vectors for `texts` (each by its trimmed self), from the cache first, then the endpoint. */
export async function textVectors(
  texts: readonly string[],
  deps: EmbeddingsDeps,
): Promise<VectorsOutcome> {
  const model = deps.embedder.model;
  const byKey = new Map<string, string[]>(); // embedding text → the trimmed texts it stands for
  for (const t of texts) {
    const key = embeddingText(t);
    if (key === '') continue;
    byKey.set(key, [...(byKey.get(key) ?? []), t.trim()]);
  }
  const keys = [...byKey.keys()];
  const outcome: VectorsOutcome = { model, texts: keys.length, cached: 0, requests: 0 };
  if (keys.length === 0) return { ...outcome, vectors: new Map() };
  const hashes = keys.map(hashOf);
  const found = await cachedVectors(deps, model, hashes);
  outcome.cached = found.size;
  try {
    const fresh = await askMissing(keys, hashes, found, deps, () => outcome.requests++);
    const vectors = new Map<string, Float32Array>();
    for (const [i, key] of keys.entries()) {
      const v = found.get(hashes[i]!) ?? fresh.get(hashes[i]!)!;
      for (const t of byKey.get(key)!) vectors.set(t, v);
    }
    return { ...outcome, vectors };
  } catch (err) {
    deps.log.warn({ err, model, texts: keys.length }, 'insights.embeddings_failed');
    return { ...outcome, failed: failureOf(err) };
  }
}

/** The cache's vectors of these hashes, all of one length (the most common); none on error. */
async function cachedVectors(deps: EmbeddingsDeps, model: string, hashes: string[]) {
  const out = new Map<string, Float32Array>();
  if (!deps.cache) return out;
  try {
    for (const [h, packed] of await deps.cache.textVectors(model, hashes)) {
      const v = unpackVector(packed);
      if (v) out.set(h, v);
    }
  } catch (err) {
    deps.log.warn({ err }, 'insights.vector_cache_read_failed');
  }
  return out;
}

/**
 * Asks for what the cache lacks and stores it. The answer's length is the truth: a cached
 * vector of another length (the endpoint's model changed under the same name) is asked again.
 */
async function askMissing(
  keys: string[],
  hashes: string[],
  found: Map<string, Float32Array>,
  deps: EmbeddingsDeps,
  onRequest: () => void,
): Promise<Map<string, Float32Array>> {
  const signal = AbortSignal.timeout(deps.deadlineMs ?? EMBEDDINGS_DEADLINE_MS);
  const fresh = new Map<string, Float32Array>();
  let wanted = keys.flatMap((_, i) => (found.has(hashes[i]!) ? [] : [i]));
  let dims = wanted.length === 0 ? commonLength(found) : undefined;
  let answered = false;
  for (let round = 0; round < 3 && (round === 0 || wanted.length > 0); round++) {
    if (wanted.length > 0) {
      const got = await deps.embedder.embed(
        wanted.map((i) => keys[i]!),
        { signal, onRequest },
      );
      const length = got[0]!.length;
      if (answered && length !== dims)
        throw new MalformedResponse(
          EMBEDDINGS_OPERATION,
          200,
          `vectors of ${length} and ${dims} dimensions`,
        );
      [dims, answered] = [length, true];
      const rows = wanted.map((i, j): [string, Float32Array] => [hashes[i]!, got[j]!]);
      for (const [h, v] of rows) fresh.set(h, v);
      await store(deps, rows);
    }
    wanted = keys.flatMap((_, i) => {
      const v = found.get(hashes[i]!);
      return v && v.length !== dims ? [i] : [];
    });
    for (const i of wanted) found.delete(hashes[i]!);
  }
  return fresh;
}

async function store(deps: EmbeddingsDeps, rows: [string, Float32Array][]): Promise<void> {
  if (!deps.cache || rows.length === 0) return;
  const now = (deps.now ?? Date.now)();
  try {
    await deps.cache.putTextVectors(
      deps.embedder.model,
      rows.map(([hash, v]) => ({ hash, vector: packVector(v) })),
      now,
      now - VECTOR_DAYS * 86_400_000,
    );
  } catch (err) {
    deps.log.warn({ err }, 'insights.vector_cache_write_failed');
  }
}

function commonLength(vectors: Map<string, Float32Array>): number | undefined {
  const counts = new Map<number, number>();
  for (const v of vectors.values()) counts.set(v.length, (counts.get(v.length) ?? 0) + 1);
  return [...counts].sort((a, b) => b[1] - a[1])[0]?.[0];
}

function failureOf(err: unknown): NonNullable<VectorsOutcome['failed']> {
  if (err instanceof ApiError) return { kind: err.kind, status: err.status };
  if (err instanceof DOMException && err.name === 'TimeoutError') return { kind: 'timeout' };
  return { kind: 'unexpected' };
}
