import { createHash } from 'node:crypto';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { EmbeddingsClient } from '../../src/api/embeddings.ts';
import { embeddingText, textVectors, vectorCacheOf } from '../../src/insights/embeddings.ts';
import { SINGLE_WORKSPACE } from '../../src/store/scope.ts';
import { PII } from '../fakes/analytics-insights-hostile.ts';
import { FakeEmbeddings } from '../fakes/embeddings.ts';
import { memoryLogger } from '../helpers/log.ts';
import { describeEachEngine } from '../helpers/store-engines.ts';

/** Vectors from a team's endpoint, cached in the store (both engines), masked text only. */

const NOW = Date.parse('2026-11-22T12:00:00Z');
const logs = memoryLogger([], 'warn');
let fake: FakeEmbeddings;
beforeEach(async () => {
  fake = await FakeEmbeddings.start();
});
afterEach(() => fake.close());

const embedder = (model = 'text-embedding-3-small', url = fake.url) =>
  new EmbeddingsClient({
    baseUrl: url,
    model,
    log: logs.log,
    retry: { minDelayMs: 1, maxDelayMs: 2 },
  });
const questions = (n: number) => Array.from({ length: n }, (_, i) => `How do I rotate key ${i}?`);

describeEachEngine('insights: text vectors through the cache', (db) => {
  it('asks once per text: a second report, or another replica, makes no request', async () => {
    const texts = [...questions(300), 'How do I rotate key 7?', '  how do I ROTATE key 7? '];
    const deps = {
      embedder: embedder(),
      cache: vectorCacheOf(db.store, SINGLE_WORKSPACE),
      log: logs.log,
      now: () => NOW,
    };
    const cold = await textVectors(texts, deps);
    expect(cold).toMatchObject({ texts: 300, cached: 0, requests: 2 });
    expect(fake.requests.map((r) => r.texts.length)).toEqual([256, 44]);
    const warm = await textVectors(texts, deps);
    expect(warm).toMatchObject({ texts: 300, cached: 300, requests: 0 });
    expect(fake.requests).toHaveLength(2);
    const replica = await db.another();
    const other = await textVectors(texts, {
      ...deps,
      cache: vectorCacheOf(replica, SINGLE_WORKSPACE),
    });
    expect(other.requests).toBe(0);
    expect(fake.requests).toHaveLength(2);
    // The same vectors, from the endpoint or from the store, for every wording of a text.
    const v = cold.vectors!.get('How do I rotate key 7?')!;
    expect([...warm.vectors!.get('how do I ROTATE key 7?')!]).toEqual([...v]);
    expect([...other.vectors!.get('How do I rotate key 7?')!]).toEqual([...v]);
    // A new text is the only one asked for.
    const more = await textVectors([...texts, 'Where is the status page?'], deps);
    expect(more).toMatchObject({ cached: 300, requests: 1 });
    expect(fake.requests.at(-1)?.texts).toEqual(['where is the status page?']);
  });

  it('sends and stores only masked text', async () => {
    const raw = `My key ${PII.openAiKey} fails, email ${PII.email} or call ${PII.phone}`;
    const out = await textVectors([raw], {
      embedder: embedder(),
      cache: vectorCacheOf(db.store, SINGLE_WORKSPACE),
      log: logs.log,
    });
    const sent = fake.textsReceived.join('\n');
    for (const secret of [PII.openAiKey, PII.email, PII.phoneEnd])
      expect(sent).not.toContain(secret);
    expect(sent).toContain('[email]');
    expect(out.vectors?.get(raw)).toBeDefined();
    // Stored under the hash of the masked text, never of the raw one.
    const hash = (t: string) => createHash('sha256').update(t).digest('hex');
    const stored = await db.store.textVectors(SINGLE_WORKSPACE, 'text-embedding-3-small', [
      hash(embeddingText(raw)),
      hash(raw.toLowerCase()),
      hash(raw),
    ]);
    expect([...stored.keys()]).toEqual([hash(embeddingText(raw))]);
  });

  it('says why when the endpoint fails, keeps nothing, and asks again next time', async () => {
    fake.inject({ kind: 'status', status: 500 }, 3);
    const deps = {
      embedder: embedder(),
      cache: vectorCacheOf(db.store, SINGLE_WORKSPACE),
      log: logs.log,
    };
    const failed = await textVectors(questions(3), deps);
    expect(failed).toMatchObject({
      texts: 3,
      requests: 1,
      failed: { kind: 'unavailable', status: 500 },
    });
    expect(failed.vectors).toBeUndefined();
    const next = await textVectors(questions(3), deps);
    expect(next).toMatchObject({ cached: 0, requests: 1 });
    expect(next.failed).toBeUndefined();
  });

  it('asks again for cached vectors of another length when the model behind the name changed', async () => {
    const deps = {
      embedder: embedder(),
      cache: vectorCacheOf(db.store, SINGLE_WORKSPACE),
      log: logs.log,
    };
    await textVectors(questions(5), deps);
    const smaller = await FakeEmbeddings.start({ dims: 32 });
    try {
      const out = await textVectors([...questions(5), 'a new one'], {
        ...deps,
        embedder: embedder('text-embedding-3-small', smaller.url),
      });
      expect(smaller.requests.map((r) => r.texts.length)).toEqual([1, 5]);
      expect(out.failed).toBeUndefined();
      expect([...out.vectors!.values()].every((v) => v.length === 32)).toBe(true);
    } finally {
      await smaller.close();
    }
  });
});
