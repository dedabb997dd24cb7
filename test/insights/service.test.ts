import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type Budget, slidingWindowBudget } from '../../src/api/budget.ts';
import { ApiClient } from '../../src/api/client.ts';
import { Unavailable } from '../../src/api/errors.ts';
import { type InsightsCache, storeInsightsCache } from '../../src/insights/cache.ts';
import { coverageNotes } from '../../src/insights/notes.ts';
import { createInsightsService, InsightsBudgetTooLow } from '../../src/insights/service.ts';
import { apiParams, type DateRange, parseVisitorsArgs } from '../../src/reports/range.ts';
import { type ScopeOf, SINGLE_WORKSPACE as WS, workspaceScope } from '../../src/store/scope.ts';
import { openSqliteStore } from '../../src/store/sqlite.ts';
import type { Store } from '../../src/store/types.ts';
import { ROTATE_KEY_QUESTIONS } from '../fakes/analytics-insights-seed.ts';
import { ApiEmulator } from '../fakes/api-emulator.ts';
import { memoryLogger } from '../helpers/log.ts';

const KEY = 'mint_insights_service_key';
const PROJECT = 'proj_ins';
const NOW = Date.parse('2026-11-22T12:00:00Z');
const INSIGHT_KINDS = ['searches', 'assistant', 'feedback', 'feedbackByPage'] as const;
let clock = NOW;
let api: ApiEmulator;
let store: Store;
let dir: string;
const logs = memoryLogger([KEY], 'info');

function analyticsBudget(limit: number): Budget {
  return slidingWindowBudget(store, {
    key: 'analytics',
    limit,
    windowMs: 3_600_000,
    description: 'The analytics budget',
    now: () => clock,
  });
}

function service(
  opts: {
    maxRequests?: number;
    budget?: number;
    planBudget?: Budget;
    cache?: InsightsCache;
    scope?: ScopeOf;
  } = {},
) {
  const budget = opts.budget === undefined ? undefined : analyticsBudget(opts.budget);
  const client = new ApiClient({
    baseUrl: api.url,
    apiKey: KEY,
    projectId: PROJECT,
    log: logs.log,
    retry: { retries: 1, minDelayMs: 1, maxDelayMs: 5, maxRetryAfterMs: 50 },
    ...(budget ? { budgets: { analytics: budget } } : {}),
  });
  return {
    client,
    insights: createInsightsService({
      api: client,
      budget: opts.planBudget ?? budget,
      log: logs.log,
      maxRequests: opts.maxRequests ?? 100,
      cache: opts.cache,
      now: () => clock,
      ...(opts.scope ? { scope: opts.scope } : {}),
    }),
  };
}

function range(text: string): DateRange {
  const r = parseVisitorsArgs(text, new Date(clock), 'UTC');
  if (!r.ok) throw new Error(r.error);
  return r.range;
}

/** The insight requests the emulator received, in order. */
const insightRequests = () =>
  api.requests.filter((r) => (INSIGHT_KINDS as readonly unknown[]).includes(r.kind));

beforeEach(async () => {
  clock = NOW;
  dir = mkdtempSync(join(tmpdir(), 'insights-svc-'));
  store = await openSqliteStore(join(dir, 'bot.sqlite'));
  api = await ApiEmulator.start({ apiKey: KEY, projectId: PROJECT, now: () => clock });
});
afterEach(async () => {
  await api.close();
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('insights report', () => {
  it('finds the seeded gaps, disliked pages and top searches, counted against last week', async () => {
    const r = range('7d');
    const report = await service().insights.build(r);
    const p = apiParams(r);
    const [from, to] = [Date.parse(p.dateFrom), Date.parse(p.dateTo)];
    const truth = api.insights.conversations({ from, to });

    expect(report.questionGaps[0]).toMatchObject({ count: 7 });
    expect(ROTATE_KEY_QUESTIONS).toContain(report.questionGaps[0]?.example);
    expect(report.searchGaps.map((g) => g.topic.example)).toEqual(
      expect.arrayContaining(['rotate api key', 'okta', 'webhook retries']),
    );
    expect(report.searchGaps.find((g) => g.topic.example === 'okta')?.noClicks).toBe(false);
    expect(report.disliked[0]?.path).toBe('/guides/authentication');
    expect(report.disliked[0]?.comments.length).toBeGreaterThan(0);
    expect(report.topSearches[0]?.searchQuery).toBe('quickstart');
    // One item per need: the rotate-key questions with their searches and comments.
    expect(report.gaps[0]).toMatchObject({ kind: 'question', asked: 7 });
    expect(report.gaps[0]?.searches.map((s) => s.text)).toContain('rotate api key');
    expect(report.gaps[0]?.comments.map((c) => c.text)).toContain('Nothing about rotating keys');
    expect(report.gapsDropped).toBe(0);

    expect(report.counts.searches).toBe(api.insights.searches({ from, to }).totalSearches);
    expect(report.counts.questions).toBe(truth.length);
    expect(report.counts.unanswered).toBe(
      truth.filter((c) => c.resolutionStatus === 'unanswered').length,
    );
    expect(report.changes.searches?.previous).toBe(
      api.insights.searches({ from: from - 7 * 86_400_000, to: from }).totalSearches,
    );
    expect(report.changes.unanswered).toBeDefined();
    expect(report.stoppedBy).toBeNull();
    expect(report.requests).toBe(insightRequests().length);
    expect(report.requests).toBeLessThanOrEqual(report.plan.total);
  });

  it('never sends more than the per-report cap, and says it stopped on it', async () => {
    const report = await service({ maxRequests: 4 }).insights.build(range('30d'));
    expect(report.plan.pages).toMatchObject({ searches: 1, assistant: 2, byPage: 1 });
    // A month's ~540 questions fit one page of 1,000: the plan is a ceiling, not a target.
    expect(report.coverage.assistant).toEqual({ planned: 2, pages: 1, complete: true });
    expect(insightRequests()).toHaveLength(3);
    expect(report.stoppedBy).toBe('cap');
    expect(report.coverage.searches).toMatchObject({ pages: 1, complete: false });
    expect(report.previousCounts).toBeUndefined(); // no room for the comparison
    expect(report.questionGaps.length).toBeGreaterThan(0);
  });

  it('plans within what is left of the shared budget, and refuses before sending when the core does not fit', async () => {
    const { client, insights } = service({ budget: 10 });
    const week = apiParams(range('7d'));
    for (let i = 0; i < 8; i++) await client.getVisitorsPage({ ...week, limit: 1, offset: 0 });
    const err = await insights.build(range('7d')).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(InsightsBudgetTooLow);
    const retryAt = (err as InsightsBudgetTooLow).retryAt.getTime();
    expect(retryAt).toBeGreaterThan(clock);
    expect(retryAt).toBeLessThanOrEqual(clock + 3_600_000);
    expect(insightRequests()).toHaveLength(0);
  });

  it('fits the plan in what the hourly budget has left, and says the budget cut it short', async () => {
    const { client, insights } = service({ budget: 10 });
    const week = apiParams(range('7d'));
    for (let i = 0; i < 5; i++) await client.getVisitorsPage({ ...week, limit: 1, offset: 0 });
    const report = await insights.build(range('30d'));
    expect(report.plan).toMatchObject({ total: 5, allowance: 5, limitedBy: 'budget' });
    expect(report.stoppedBy).toBe('budget');
    expect(insightRequests().length).toBeLessThanOrEqual(5);
  });

  it('stops early on the budget when another report takes the slots meanwhile', async () => {
    // The plan sees 100 left; the client's budget (the truth) has 5.
    const { insights } = service({ budget: 5, planBudget: analyticsBudget(100) });
    const report = await insights.build(range('30d'));
    expect(report.stoppedBy).toBe('budget');
    expect(insightRequests()).toHaveLength(5);
    expect(report.requests).toBe(5); // the sixth was refused by the budget, never sent
    expect(report.plan.total).toBeGreaterThan(5);
    expect(report.topSearches.length).toBeGreaterThan(0);
  });

  it('fails plainly when a core request fails', async () => {
    api.inject('assistant', { status: 503 }, 2);
    await expect(service().insights.build(range('7d'))).rejects.toBeInstanceOf(Unavailable);
  });

  it('reads a channel project of its own', async () => {
    api.addProject('proj_docs_b');
    await service({ maxRequests: 3 }).insights.build(range('7d'), 'proj_docs_b');
    expect(insightRequests().every((q) => q.path.startsWith('/v1/analytics/proj_docs_b/'))).toBe(
      true,
    );
  });
});

describe('caching closed periods', () => {
  it('answers a closed period from the cache and reuses its counts as the next "previous"', async () => {
    const { insights } = service();
    const lastWeek = range('2026-11-08 2026-11-14');
    const first = await insights.build(lastWeek);
    expect(first.closed).toBe(true);
    const sent = insightRequests().length;
    expect(await insights.build(lastWeek)).toEqual({ ...first, requests: 0 });
    expect(insightRequests()).toHaveLength(sent);

    const thisWeek = await insights.build(range('2026-11-15 2026-11-21'));
    expect(thisWeek.plan.previousCached).toBe(true);
    expect(thisWeek.previousCounts).toEqual(first.counts);
    const previousFrom = apiParams(lastWeek).dateFrom;
    const again = insightRequests().slice(sent);
    expect(again.some((q) => q.query.dateFrom === previousFrom)).toBe(false);
  });

  it('keeps settled periods in the database: a restarted bot sends nothing for them', async () => {
    const cache = () => storeInsightsCache(store, logs.log, () => clock);
    const lastWeek = range('2026-11-08 2026-11-14');
    const first = await service({ cache: cache() }).insights.build(lastWeek);
    const sent = insightRequests().length;
    expect(sent).toBeGreaterThan(0);

    // A new process (or another replica) on the same database.
    const restarted = service({ cache: cache() }).insights;
    const again = await restarted.build(lastWeek);
    expect(again).toEqual({ ...first, requests: 0 });
    expect(insightRequests()).toHaveLength(sent);
    const thisWeek = await restarted.build(range('2026-11-15 2026-11-21'));
    expect(thisWeek.plan.previousCached).toBe(true);
    expect(thisWeek.previousCounts).toEqual(first.counts);
    expect(logs.text()).toContain('"from":"store"');

    // A body written by another version is not trusted: the report is built again.
    const key = `insights:|${lastWeek.from}|${lastWeek.to}|UTC`;
    expect(await store.cachedReport(WS, key, clock)).toBeDefined();
    await store.cacheReport(WS, key, '{"v":0}', clock + 1e9, clock);
    const rebuilt = await service({ cache: cache() }).insights.build(lastWeek);
    expect(rebuilt.requests).toBeGreaterThan(0);
    expect(logs.text()).toContain('insights.cache_stale_shape');
  });

  it("keeps each workspace's reports apart: one's cached period answers no other", async () => {
    const cache = () => storeInsightsCache(store, logs.log, () => clock);
    const [alpha, beta] = [{ workspace: { teamId: 'T0A' } }, { workspace: { teamId: 'T0B' } }];
    const lastWeek = range('2026-11-08 2026-11-14');
    const one = service({ cache: cache(), scope: workspaceScope }).insights;
    const first = await one.build(lastWeek, undefined, alpha);
    const sent = insightRequests().length;
    expect((await one.build(lastWeek, undefined, alpha)).requests).toBe(0);
    // Beta asks the same period: built for Beta, from the API, not from Alpha's (memory or store).
    const forBeta = await one.build(lastWeek, undefined, beta);
    expect(forBeta.requests).toBeGreaterThan(0);
    expect(insightRequests().length).toBeGreaterThan(sent);
    // Another replica: each workspace finds its own in the store, the single workspace none.
    const other = service({ cache: cache(), scope: workspaceScope }).insights;
    expect(await other.build(lastWeek, undefined, alpha)).toEqual({ ...first, requests: 0 });
    const single = await service({ cache: cache() }).insights.build(lastWeek);
    expect(single.requests).toBeGreaterThan(0);
    // Distributed mode builds for a workspace only.
    await expect(other.build(lastWeek)).rejects.toThrow('a team id is needed');
  });

  it('keeps an unsettled period only briefly', async () => {
    clock = Date.parse('2026-11-22T03:00:00Z'); // yesterday ended 3 h ago: not settled
    const { insights } = service();
    const r = range('7d');
    const first = await insights.build(r);
    expect(first.closed).toBe(false);
    const sent = insightRequests().length;
    clock += 11 * 60_000;
    const second = await insights.build(r);
    expect(second).not.toBe(first);
    expect(insightRequests().length).toBeGreaterThan(sent);
  });
});

describe('coverage notes', () => {
  it('say nothing when everything was read, and what and why when not', async () => {
    const full = await service().insights.build(range('7d'));
    expect(coverageNotes(full)).toEqual([]);
    const capped = await service({ maxRequests: 3 }).insights.build(range('30d'));
    const [note] = coverageNotes(capped);
    expect(note).toContain('at most 3 requests');
    expect(note).toContain('search terms (1 page read, more left)');
    expect(note).toContain('feedback comments (not read)');
  });

  it('tell a source read as far as any report reads it apart from an early stop', async () => {
    // 30 days of the seeded site: more feedback comments than the 2 pages a report reads,
    // with requests to spare under the cap.
    const report = await service({ maxRequests: 100 }).insights.build(range('30d'));
    expect(report.coverage.feedback).toMatchObject({ pages: 2, complete: false });
    expect(report.requests).toBeLessThan(report.plan.total);
    expect(report.stoppedBy).toBeNull();
    const notes = coverageNotes(report);
    expect(notes.join(' ')).not.toContain('Stopped early');
    expect(notes).toContain(
      'Read the first 200 feedback comments the API returned, the most a report reads; there are more.',
    );
  });
});
