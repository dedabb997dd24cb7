import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type Budget, slidingWindowBudget } from '../../src/api/budget.ts';
import { ApiClient } from '../../src/api/client.ts';
import { EmbeddingsClient } from '../../src/api/embeddings.ts';
import { storeInsightsCache } from '../../src/insights/cache.ts';
import { coverageNotes } from '../../src/insights/notes.ts';
import { createInsightsService } from '../../src/insights/service.ts';
import { parseVisitorsArgs } from '../../src/reports/range.ts';
import { openSqliteStore } from '../../src/store/sqlite.ts';
import type { Store } from '../../src/store/types.ts';
import { OUTAGE_QUESTIONS } from '../fakes/analytics-insights-hostile.ts';
import { ApiEmulator } from '../fakes/api-emulator.ts';
import { type EmbeddingsFault, FakeEmbeddings } from '../fakes/embeddings.ts';
import { memoryLogger } from '../helpers/log.ts';

/**
 * /insights with a team's embeddings endpoint: questions grouped by meaning, vectors from
 * the store's cache, the budgets untouched, and a failing endpoint leaving a report grouped
 * by words with one line saying so.
 */

const API_KEY = 'mint_insights_embeddings_key';
/** Not shaped like any token the log scrubber knows: only not logging it keeps it out. */
const EMBEDDINGS_KEY = 'team-embeddings-credential-0123456789';
const PROJECT = 'proj_emb';
const NOW = Date.parse('2026-11-22T12:00:00Z');
let api: ApiEmulator;
let fake: FakeEmbeddings;
let store: Store;
let dir: string;
let logs: ReturnType<typeof memoryLogger>;

const budget = (key: string): Budget =>
  slidingWindowBudget(store, {
    key,
    limit: 100,
    windowMs: 3_600_000,
    description: key,
    now: () => NOW,
  });

function service(o: { embeddings?: boolean; deadlineMs?: number; cache?: boolean } = {}) {
  const analytics = budget('analytics');
  const agent = budget('agent');
  const client = new ApiClient({
    baseUrl: api.url,
    apiKey: API_KEY,
    projectId: PROJECT,
    log: logs.log,
    retry: { retries: 1, minDelayMs: 1, maxDelayMs: 5, maxRetryAfterMs: 50 },
    budgets: { analytics, agent },
  });
  const embedder = new EmbeddingsClient({
    baseUrl: fake.url,
    apiKey: EMBEDDINGS_KEY,
    model: 'text-embedding-3-small',
    log: logs.log,
    timeoutMs: 200,
    retry: { minDelayMs: 1, maxDelayMs: 5, maxRetryAfterMs: 100 },
  });
  const insights = createInsightsService({
    api: client,
    budget: analytics,
    log: logs.log,
    now: () => NOW,
    ...(o.cache ? { cache: storeInsightsCache(store, logs.log, () => NOW) } : {}),
    ...(o.embeddings === false
      ? {}
      : { embeddings: { embedder, cache: store, now: () => NOW, deadlineMs: o.deadlineMs } }),
  });
  return { insights, analytics, agent };
}

const week = () => {
  const r = parseVisitorsArgs('7d', new Date(NOW), 'UTC');
  if (!r.ok) throw new Error(r.error);
  return r.range;
};
const topicsOf = (report: Awaited<ReturnType<ReturnType<typeof service>['insights']['build']>>) =>
  report.questionGaps.map((t) => t.variants.map((v) => v.text).sort());

beforeEach(async () => {
  logs = memoryLogger([], 'debug');
  dir = mkdtempSync(join(tmpdir(), 'insights-emb-'));
  store = await openSqliteStore(join(dir, 'bot.sqlite'));
  api = await ApiEmulator.start({ apiKey: API_KEY, projectId: PROJECT, now: () => NOW });
  api.insights.mix({ paraphrases: true });
  fake = await FakeEmbeddings.start({ key: EMBEDDINGS_KEY });
});
afterEach(async () => {
  await fake.close();
  await api.close();
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('/insights with an embeddings endpoint', () => {
  it('joins a need asked in words that share none, which words alone leave apart', async () => {
    const outage = [...OUTAGE_QUESTIONS].sort();
    const lexical = await service({ embeddings: false }).insights.build(week());
    expect(lexical.semantic).toBeUndefined();
    expect(topicsOf(lexical)).not.toContainEqual(outage);
    const report = await service().insights.build(week());
    expect(report.semantic).toMatchObject({
      model: 'text-embedding-3-small',
      cached: 0,
      requests: 1,
    });
    expect(report.questionGaps.find((t) => OUTAGE_QUESTIONS.includes(t.example))?.count).toBe(3);
    expect(topicsOf(report).find((t) => t.includes('Can I book a demo with sales?'))).toEqual([
      'Can I book a demo with sales?',
    ]);
    expect(coverageNotes(report)).toEqual(coverageNotes(lexical));
  });

  it('asks for each text once: a later report (another replica too) reads the cache and sends nothing', async () => {
    const cold = await service().insights.build(week());
    const texts = cold.semantic!.texts;
    expect(cold.semantic).toMatchObject({ cached: 0, requests: Math.ceil(texts / 256) });
    expect(fake.textsReceived).toHaveLength(texts);
    const warm = await service().insights.build(week());
    expect(warm.semantic).toMatchObject({ texts, cached: texts, requests: 0 });
    expect(fake.requests).toHaveLength(cold.semantic!.requests);
    expect(warm.questionGaps).toEqual(cold.questionGaps);
  });

  it('spends no analytics request and no agent use on the endpoint', async () => {
    const { insights, analytics, agent } = service();
    const report = await insights.build(week());
    expect(fake.requests.length).toBeGreaterThan(0);
    expect(100 - (await analytics.remaining())).toBe(report.requests);
    expect(report.requests).toBe(api.requests.length);
    expect(await agent.remaining()).toBe(100);
  });

  const faults: [string, EmbeddingsFault, number, string][] = [
    ['a 500, on every retry', { kind: 'status', status: 500 }, 3, 'answered 500'],
    [
      'a 429 with a long Retry-After',
      { kind: 'status', status: 429, retryAfter: '60' },
      1,
      'was rate limiting (429)',
    ],
    ['no answer at all', { kind: 'hang' }, 3, 'did not answer in time'],
    [
      'an answer that is not JSON',
      { kind: 'malformed' },
      1,
      'sent an answer that could not be read',
    ],
    [
      'a vector of another length',
      { kind: 'wrong-dimension' },
      1,
      'sent an answer that could not be read',
    ],
  ];
  for (const [what, fault, times, cause] of faults)
    it(`groups by words and says so in one line on ${what}, never failing the report`, async () => {
      const lexical = await service({ embeddings: false }).insights.build(week());
      fake.inject(fault, times);
      const report = await service().insights.build(week());
      expect(report.semantic?.failed).toBeDefined();
      expect(report.questionGaps).toEqual(lexical.questionGaps);
      expect(coverageNotes(report)).toEqual([
        ...coverageNotes(lexical),
        `Questions are grouped by their words only: the embeddings endpoint ${cause}.`,
      ]);
    });

  it('keeps no settled report grouped by words for want of the endpoint: the next one asks again', async () => {
    const r = parseVisitorsArgs('2026-11-08 2026-11-14', new Date(NOW), 'UTC');
    if (!r.ok) throw new Error(r.error);
    fake.inject({ kind: 'status', status: 503 }, 3);
    const failed = await service({ cache: true }).insights.build(r.range);
    expect([failed.closed, failed.semantic?.failed?.status]).toEqual([true, 503]);
    const again = await service({ cache: true }).insights.build(r.range);
    expect(again.requests).toBeGreaterThan(0);
    expect(again.semantic?.failed).toBeUndefined();
    expect(coverageNotes(again).join(' ')).not.toContain('embeddings');
  });

  it('gives up on an endpoint that holds every attempt once its deadline passes', async () => {
    fake.inject({ kind: 'hang' }, 10);
    const started = performance.now();
    const report = await service({ deadlineMs: 300 }).insights.build(week());
    expect(performance.now() - started).toBeLessThan(3_000);
    expect(report.semantic?.failed).toEqual({ kind: 'timeout' });
  });

  it('never logs the key, whatever fails', async () => {
    fake.inject({ kind: 'status', status: 500 }, 3);
    await service().insights.build(week());
    fake.inject({ kind: 'malformed' });
    await service().insights.build(week());
    expect(logs.text()).toContain('insights.embeddings_failed');
    expect(logs.text()).not.toContain(EMBEDDINGS_KEY);
  });
});
