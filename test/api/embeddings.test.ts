import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { EMBEDDINGS_BATCH, EmbeddingsClient } from '../../src/api/embeddings.ts';
import { MalformedResponse, RateLimited, Timeout, Unauthorized } from '../../src/api/errors.ts';
import { FakeEmbeddings } from '../fakes/embeddings.ts';
import { memoryLogger } from '../helpers/log.ts';

const KEY = 'local-embeddings-key-0123456789';
let fake: FakeEmbeddings;
const logs = memoryLogger([KEY]);

beforeEach(async () => {
  fake = await FakeEmbeddings.start({ key: KEY });
});
afterEach(() => fake.close());

function client(o: { key?: string; timeoutMs?: number; maxRetryAfterMs?: number } = {}) {
  return new EmbeddingsClient({
    baseUrl: `${fake.url}/`,
    apiKey: 'key' in o ? o.key : KEY,
    model: 'text-embedding-3-small',
    log: logs.log,
    timeoutMs: o.timeoutMs ?? 2_000,
    retry: { minDelayMs: 1, maxDelayMs: 5, maxRetryAfterMs: o.maxRetryAfterMs ?? 2_000 },
  });
}

describe('embeddings client', () => {
  it('asks in batches of at most 256 texts and gives the vectors back in the texts’ order', async () => {
    const texts = Array.from({ length: 300 }, (_, i) => `question ${i} about keys`);
    const vectors = await client().embed(texts);
    expect(fake.requests.map((r) => r.texts.length)).toEqual([EMBEDDINGS_BATCH, 44]);
    expect(fake.requests[0]).toMatchObject({
      model: 'text-embedding-3-small',
      authorization: `Bearer ${KEY}`,
    });
    expect(vectors).toHaveLength(300);
    // The fake answers `data` reversed: the client orders it by `index`.
    for (const i of [0, 1, 255, 256, 299])
      expect([...vectors[i]!]).toEqual(fake.vectorOf(texts[i]!).map(Math.fround));
  });

  it('asks again after a 500 and after a timeout (a computing POST), and waits out a 429’s Retry-After', async () => {
    fake.inject({ kind: 'status', status: 500 });
    fake.inject({ kind: 'hang' });
    const [v] = await client({ timeoutMs: 300 }).embed(['is the api down']);
    expect(v).toHaveLength(64);
    expect(fake.requests.map((r) => r.answered)).toEqual([500, 'hang', 200]);
    fake.inject({ kind: 'status', status: 429, retryAfter: '0.3' });
    const started = performance.now();
    await client().embed(['is the api down']);
    expect(fake.requests.map((r) => r.answered).slice(3)).toEqual([429, 200]);
    expect(performance.now() - started).toBeGreaterThanOrEqual(280);
  });

  it('gives up with typed errors: a hang past its retries, a 429 too long to wait, a bad key', async () => {
    fake.inject({ kind: 'hang' }, 3);
    await expect(client({ timeoutMs: 100 }).embed(['a'])).rejects.toBeInstanceOf(Timeout);
    expect(fake.requests).toHaveLength(3);
    fake.inject({ kind: 'status', status: 429, retryAfter: '60' });
    await expect(client().embed(['a'])).rejects.toBeInstanceOf(RateLimited);
    const refused = await client({ key: 'wrong-key-0123456789' })
      .embed(['a'])
      .catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(Unauthorized);
    expect((refused as Error).message).toBe(
      'The embeddings endpoint rejected the key: it is wrong or has expired (check INSIGHTS_EMBEDDINGS_KEY)',
    );
  });

  it('refuses an answer it cannot read: not JSON, or a vector of another length', async () => {
    fake.inject({ kind: 'malformed' });
    const bad = await client()
      .embed(['a'])
      .catch((e: unknown) => e);
    expect(bad).toBeInstanceOf(MalformedResponse);
    expect((bad as Error).message).toMatch(
      /^The embeddings endpoint sent an answer we could not read/,
    );
    fake.inject({ kind: 'wrong-dimension' });
    await expect(client().embed(['a', 'b'])).rejects.toThrow(/dimensions/);
  });

  it('sends no Authorization header without a key (a local server)', async () => {
    const open = await FakeEmbeddings.start();
    try {
      const c = new EmbeddingsClient({ baseUrl: open.url, model: 'm', log: logs.log });
      await c.embed(['a']);
      expect(open.requests[0]?.authorization).toBeUndefined();
    } finally {
      await open.close();
    }
  });

  it('never logs the key', async () => {
    fake.inject({ kind: 'status', status: 500 }, 3);
    await client()
      .embed(['a'])
      .catch(() => {});
    expect(logs.text()).toContain('embeddings.create');
    expect(logs.text()).not.toContain(KEY);
  });
});
