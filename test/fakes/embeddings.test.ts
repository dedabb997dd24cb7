import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FakeEmbeddings } from './embeddings.ts';

/** The fake embeddings endpoint behaves like an OpenAI-compatible one, faults included. */

let fake: FakeEmbeddings;
beforeEach(async () => {
  fake = await FakeEmbeddings.start({ key: 'sk-fake-key-for-tests-0123456789' });
});
afterEach(() => fake.close());

const post = (body: unknown, key = 'sk-fake-key-for-tests-0123456789', signal?: AbortSignal) =>
  fetch(`${fake.url}/embeddings`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
    body: JSON.stringify(body),
    ...(signal ? { signal } : {}),
  });

const cos = (a: number[], b: number[]) => a.reduce((s, x, i) => s + x * b[i]!, 0);

describe('fake embeddings endpoint', () => {
  it('answers OpenAI’s shape: one unit vector per text, by index, and the usage', async () => {
    const res = await post({
      model: 'text-embedding-3-small',
      input: ['rotate api key', 'status'],
    });
    expect(res.status).toBe(200);
    const body = (await res.json()) as {
      object: string;
      data: { object: string; index: number; embedding: number[] }[];
      model: string;
      usage: { total_tokens: number };
    };
    expect(body).toMatchObject({ object: 'list', model: 'text-embedding-3-small' });
    expect(body.data.map((d) => d.index).sort()).toEqual([0, 1]);
    for (const d of body.data) {
      expect(d.object).toBe('embedding');
      expect(d.embedding).toHaveLength(64);
      expect(Math.hypot(...d.embedding)).toBeCloseTo(1, 6);
    }
    expect(body.usage.total_tokens).toBeGreaterThan(0);
    expect(fake.requests[0]).toMatchObject({ texts: ['rotate api key', 'status'], answered: 200 });
  });

  it('puts paraphrases that share no word close, and two needs that share words apart', () => {
    const v = (t: string) => fake.vectorOf(t);
    expect(cos(v('Is the API down?'), v('Where is the status page?'))).toBeGreaterThan(0.8);
    expect(cos(v('Is the API down?'), v('any outage today'))).toBeGreaterThan(0.8);
    expect(cos(v('I was charged twice'), v('can I get a refund'))).toBeGreaterThan(0.8);
    expect(cos(v('rotate api key'), v('delete api key'))).toBeLessThan(0.65);
    expect(cos(v('Is the API down?'), v('Can I book a demo with sales?'))).toBeLessThan(0.3);
    expect(v('Is the API down?')).toEqual(v('is the api down'));
  });

  it('refuses a request without the key, and an unknown path, as OpenAI does', async () => {
    const res = await post({ model: 'm', input: ['x'] }, 'sk-wrong');
    expect(res.status).toBe(401);
    expect(await res.json()).toMatchObject({ error: { type: 'invalid_request_error' } });
    const other = await fetch(`${fake.url}/chat`, { method: 'POST', body: '{}' });
    expect(other.status).toBe(404);
  });

  it('gives the next requests their faults: 429 with Retry-After, 500, malformed, a vector too short', async () => {
    fake.inject({ kind: 'status', status: 429, retryAfter: '2' });
    fake.inject({ kind: 'status', status: 500 }, 2);
    fake.inject({ kind: 'malformed' });
    fake.inject({ kind: 'wrong-dimension' });
    const limited = await post({ model: 'm', input: ['a'] });
    expect([limited.status, limited.headers.get('retry-after')]).toEqual([429, '2']);
    expect((await post({ model: 'm', input: ['a'] })).status).toBe(500);
    expect((await post({ model: 'm', input: ['a'] })).status).toBe(500);
    const malformed = await post({ model: 'm', input: ['a'] });
    expect(malformed.status).toBe(200);
    await expect(malformed.json()).rejects.toThrow();
    const short = (await (await post({ model: 'm', input: ['a', 'b'] })).json()) as {
      data: { index: number; embedding: number[] }[];
    };
    expect(short.data.find((d) => d.index === 0)?.embedding).toHaveLength(63);
    expect(short.data.find((d) => d.index === 1)?.embedding).toHaveLength(64);
    expect((await post({ model: 'm', input: ['a'] })).status).toBe(200);
  });

  it('hangs when told: no answer until the caller gives up', async () => {
    fake.inject({ kind: 'hang' });
    const err = await post({ model: 'm', input: ['a'] }, undefined, AbortSignal.timeout(200)).catch(
      (e: unknown) => e,
    );
    expect((err as Error).name).toBe('TimeoutError');
    expect(fake.requests[0]?.answered).toBe('hang');
  });
});
