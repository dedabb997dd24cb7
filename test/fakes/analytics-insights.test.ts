import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { slidingWindowBudget } from '../../src/api/budget.ts';
import { ApiClient } from '../../src/api/client.ts';
import {
  BudgetExhausted,
  InvalidRequest,
  MalformedResponse,
  RateLimited,
  Unavailable,
} from '../../src/api/errors.ts';
import { openSqliteStore } from '../../src/store/sqlite.ts';
import type { Store } from '../../src/store/types.ts';
import { memoryLogger } from '../helpers/log.ts';
import { ROTATE_KEY_QUESTIONS } from './analytics-insights-seed.ts';
import { ApiEmulator } from './api-emulator.ts';

const KEY = 'mint_insights_emulator_key';
const PROJECT = 'proj_ins';
const NOW = Date.parse('2026-11-22T12:00:00Z');
const WEEK = { dateFrom: '2026-11-15', dateTo: '2026-11-22' };
const MONTH = { dateFrom: '2026-10-23', dateTo: '2026-11-22' };
const logs = memoryLogger([KEY], 'warn');

let api: ApiEmulator;
let store: Store;
let dir: string;

function client(budgetLimit?: number) {
  return new ApiClient({
    baseUrl: api.url,
    apiKey: KEY,
    projectId: PROJECT,
    log: logs.log,
    retry: { retries: 1, minDelayMs: 1, maxDelayMs: 5, maxRetryAfterMs: 50 },
    ...(budgetLimit === undefined
      ? {}
      : {
          budgets: {
            analytics: slidingWindowBudget(store, {
              key: 'analytics',
              limit: budgetLimit,
              windowMs: 3_600_000,
              description: 'The analytics budget',
              now: () => NOW,
            }),
          },
        }),
  });
}

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'insights-emu-'));
  store = await openSqliteStore(join(dir, 'bot.sqlite'));
  api = await ApiEmulator.start({ apiKey: KEY, projectId: PROJECT, now: () => NOW });
});
afterEach(async () => {
  await api.close();
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('assistant conversations', () => {
  it('pages with a ULID cursor, newest first, each turn answered or unanswered', async () => {
    const c = client();
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const page = await c.getAssistantPage({ ...WEEK, limit: 50, cursor });
      seen.push(...page.conversations.map((x) => x.id));
      expect(page.hasMore).toBe(page.nextCursor !== null);
      cursor = page.nextCursor;
      pages++;
    } while (cursor);
    const truth = api.insights.conversations({
      from: Date.parse(WEEK.dateFrom),
      to: Date.parse(WEEK.dateTo),
    });
    expect(pages).toBe(Math.ceil(truth.length / 50));
    expect(seen).toEqual(truth.map((x) => x.id));
    expect(new Set(seen).size).toBe(seen.length);
    const cursors = api.requestsTo('assistant').map((r) => r.query.cursor ?? '');
    expect(cursors.slice(1).every((x) => /^[0-9A-HJKMNP-TV-Z]{26}$/.test(x))).toBe(true);
  });

  it('holds the 14 unanswered rotate-key paraphrases on the 14 days before today', async () => {
    const twoWeeks = { dateFrom: '2026-11-08', dateTo: '2026-11-22', limit: 1000 };
    const page = await client().getAssistantPage(twoWeeks);
    const unanswered = page.conversations.filter((x) => x.resolutionStatus === 'unanswered');
    for (const q of ROTATE_KEY_QUESTIONS) expect(unanswered.map((x) => x.query)).toContain(q);
    const week = await client().getAssistantPage({ ...WEEK, limit: 1000 });
    const inWeek = week.conversations.filter((x) => ROTATE_KEY_QUESTIONS.includes(x.query));
    expect(inWeek).toHaveLength(7); // date-range filtering: days 11-15 … 11-21
    expect(page.conversations.some((x) => x.resolutionStatus === 'answered')).toBe(true);
  });

  it('refuses a cursor that is not a ULID from a previous page', async () => {
    const err = await client()
      .getAssistantPage({ ...WEEK, limit: 10, cursor: 'not-a-ulid' })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(InvalidRequest);
  });
});

describe('searches', () => {
  it('pages with an opaque cursor, by hits, with totalSearches the sum of hits', async () => {
    const c = client();
    const rows = [];
    let cursor: string | null = null;
    let total = -1;
    do {
      const page = await c.getSearchesPage({ ...MONTH, limit: 100, cursor });
      rows.push(...page.searches);
      total = page.totalSearches;
      cursor = page.nextCursor;
    } while (cursor);
    expect(api.requestsTo('searches').length).toBeGreaterThan(2);
    expect(rows.reduce((n, r) => n + r.hits, 0)).toBe(total);
    const hits = rows.map((r) => r.hits);
    expect(hits).toEqual([...hits].sort((a, b) => b - a));
    const rotate = rows.find((r) => r.searchQuery === 'rotate api key');
    expect(rotate).toMatchObject({ ctr: 0, topClickedPage: null });
    expect(rotate?.hits).toBeGreaterThanOrEqual(150);
    expect(rows.find((r) => r.searchQuery === 'quickstart')?.topClickedPage).toBe('/quickstart');
  });

  it('rejects a cursor from another range and an out-of-range limit', async () => {
    const c = client();
    const first = await c.getSearchesPage({ ...MONTH, limit: 10 });
    const other = c.getSearchesPage({ ...WEEK, limit: 10, cursor: first.nextCursor });
    await expect(other).rejects.toBeInstanceOf(InvalidRequest);
    await expect(c.getSearchesPage({ ...WEEK, limit: 101 })).rejects.toBeInstanceOf(InvalidRequest);
  });
});

describe('feedback', () => {
  it('counts thumbs per page, /guides/authentication the most disliked', async () => {
    const c = client();
    const byPage = await c.getFeedbackByPage({ ...MONTH, limit: 100 });
    const worst = [...byPage.feedback].sort((a, b) => b.thumbsDown - a.thumbsDown)[0];
    expect(worst?.path).toBe('/guides/authentication');
    for (const p of byPage.feedback) expect(p.total).toBe(p.thumbsUp + p.thumbsDown + p.code);
    const short = await c.getFeedbackByPage({ ...MONTH, limit: 3 });
    expect(short).toMatchObject({ hasMore: true });
    expect(short.feedback).toHaveLength(3);
  });

  it('pages entries with a cursor and filters by source and status', async () => {
    const c = client();
    const all = [];
    let cursor: string | null = null;
    do {
      const page = await c.getFeedbackPage({ ...WEEK, limit: 20, cursor });
      all.push(...page.feedback);
      cursor = page.nextCursor;
    } while (cursor);
    expect(all.length).toBe(
      api.insights.feedback({ from: Date.parse(WEEK.dateFrom), to: Date.parse(WEEK.dateTo) })
        .length,
    );
    const code = await c.getFeedbackPage({ ...WEEK, limit: 100, source: 'code_snippet' });
    expect(code.feedback.every((f) => f.source === 'code_snippet')).toBe(true);
    const pending = await c.getFeedbackPage({ ...WEEK, limit: 100, status: ['pending'] });
    expect(pending.feedback.every((f) => f.status === 'pending')).toBe(true);
    expect(api.requestsTo('feedback').at(-1)?.query.status).toBe('pending');
  });
});

describe('faults and budget', () => {
  it('uses the inject mechanism: 5xx and 429 are retried, malformed and wrong shapes fail', async () => {
    const c = client();
    api.inject('searches', { status: 503 });
    await expect(c.getSearchesPage({ ...WEEK, limit: 5 })).resolves.toBeDefined();
    api.inject('assistant', { status: 429, retryAfterSec: 0 });
    await expect(c.getAssistantPage({ ...WEEK, limit: 5 })).resolves.toBeDefined();
    api.inject('feedbackByPage', { status: 500 }, 2);
    await expect(c.getFeedbackByPage({ ...WEEK, limit: 5 })).rejects.toBeInstanceOf(Unavailable);
    api.inject('feedback', { malformed: true });
    await expect(c.getFeedbackPage({ ...WEEK, limit: 5 })).rejects.toBeInstanceOf(
      MalformedResponse,
    );
    for (const kind of ['searches', 'assistant', 'feedback', 'feedbackByPage'] as const) {
      api.inject(kind, { wrongShape: true });
    }
    await expect(c.getSearchesPage({ ...WEEK, limit: 5 })).rejects.toBeInstanceOf(
      MalformedResponse,
    );
    await expect(c.getAssistantPage({ ...WEEK, limit: 5 })).rejects.toBeInstanceOf(
      MalformedResponse,
    );
    await expect(c.getFeedbackPage({ ...WEEK, limit: 5 })).rejects.toBeInstanceOf(
      MalformedResponse,
    );
    await expect(c.getFeedbackByPage({ ...WEEK, limit: 5 })).rejects.toBeInstanceOf(
      MalformedResponse,
    );
    api.inject('searches', { status: 429, retryAfterSec: 3600 });
    await expect(c.getSearchesPage({ ...WEEK, limit: 5 })).rejects.toBeInstanceOf(RateLimited);
  });

  it('shares the analytics budget with /visitors and stops at it without sending', async () => {
    const c = client(3);
    await c.getVisitorsPage({ ...WEEK, limit: 1, offset: 0 });
    await c.getSearchesPage({ ...WEEK, limit: 1 });
    await c.getFeedbackByPage({ ...WEEK, limit: 1 });
    await expect(c.getAssistantPage({ ...WEEK, limit: 1 })).rejects.toBeInstanceOf(BudgetExhausted);
    expect(api.requests).toHaveLength(3);
  });

  it('asks for a per-channel project and answers 404 for an unknown one', async () => {
    api.addProject('proj_other');
    const c = client();
    await c.getSearchesPage({ ...WEEK, limit: 1, project: 'proj_other' });
    expect(api.requests.at(-1)?.path).toBe('/v1/analytics/proj_other/searches');
    await expect(c.getAssistantPage({ ...WEEK, limit: 1, project: 'nope' })).rejects.toMatchObject({
      kind: 'not_found',
    });
  });
});
