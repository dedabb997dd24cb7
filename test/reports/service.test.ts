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
  Unavailable,
} from '../../src/api/errors.ts';
import { compareRows } from '../../src/reports/aggregate.ts';
import {
  apiParams,
  type DateRange,
  parseVisitorsArgs,
  previousRange,
} from '../../src/reports/range.ts';
import { createReportService } from '../../src/reports/service.ts';
import { footnotes } from '../../src/slack/report-blocks.ts';
import { SINGLE_WORKSPACE } from '../../src/store/scope.ts';
import { openSqliteStore } from '../../src/store/sqlite.ts';
import type { Store } from '../../src/store/types.ts';
import { ApiEmulator } from '../fakes/api-emulator.ts';
import { memoryLogger } from '../helpers/log.ts';

const KEY = 'mint_report_test_key_0001';
const NOW = Date.parse('2026-11-22T12:00:00Z');
let clock = NOW;
let api: ApiEmulator;
let store: Store;
let dir: string;
const logs = memoryLogger([KEY], 'info');

function client(budgetLimit?: number) {
  return new ApiClient({
    baseUrl: api.url,
    apiKey: KEY,
    projectId: 'p',
    log: logs.log,
    retry: { retries: 2, minDelayMs: 5, maxDelayMs: 20, maxRetryAfterMs: 100 },
    ...(budgetLimit === undefined
      ? {}
      : {
          budgets: {
            analytics: slidingWindowBudget(store, {
              key: 'analytics',
              limit: budgetLimit,
              windowMs: 3_600_000,
              description: 'Analytics budget',
              now: () => clock,
            }),
          },
        }),
  });
}

const service = (opts: { maxRequests?: number; budget?: number } = {}) =>
  createReportService({
    api: client(opts.budget),
    store,
    log: logs.log,
    maxRequests: opts.maxRequests ?? 1_000,
    now: () => clock,
  });

function range(text: string, tz = 'UTC'): DateRange {
  const r = parseVisitorsArgs(text, new Date(clock), tz);
  if (!r.ok) throw new Error(r.error);
  return r.range;
}

function truthFor(r: DateRange) {
  const p = apiParams(r);
  return api.truth(p.dateFrom, p.dateTo);
}

const visitorRequests = () => api.requestsTo('visitors');

beforeEach(async () => {
  clock = NOW;
  dir = mkdtempSync(join(tmpdir(), 'reports-'));
  store = await openSqliteStore(join(dir, 'bot.sqlite'));
  api = await ApiEmulator.start({ apiKey: KEY, projectId: 'p', now: () => clock });
  api.setSite({ paths: 1_200 });
});
afterEach(async () => {
  await api.close();
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('a complete report', () => {
  it('has exact totals, deltas, top pages, movers and daily points', async () => {
    api.setSite({ paths: 2_000 });
    const r = range('2026-11-01 2026-11-07');
    const report = await service().build(r);
    const cur = truthFor(r);
    const prev = truthFor(previousRange(r));

    expect(report.totals).toEqual(cur.totals);
    expect(report.previousTotals).toEqual(prev.totals);
    expect(report.changes.total).toEqual({
      current: cur.totals.total,
      previous: prev.totals.total,
      abs: cur.totals.total - prev.totals.total,
      pct: ((cur.totals.total - prev.totals.total) / prev.totals.total) * 100,
    });

    const expectedRows = [...cur.rows].sort(compareRows);
    expect(expectedRows.length).toBeGreaterThan(1_000);
    expect(report.rows).toEqual(expectedRows);
    expect(report.top).toEqual(expectedRows.slice(0, 10));

    // Movers, recomputed independently from the emulator's truth.
    const prevBy = new Map(prev.rows.map((x) => [x.path, x.total]));
    const curBy = new Map(cur.rows.map((x) => [x.path, x.total]));
    const paths = new Set([...prevBy.keys(), ...curBy.keys()]);
    const all = [...paths]
      .map((path) => ({ path, c: curBy.get(path) ?? 0, p: prevBy.get(path) ?? 0 }))
      .filter((m) => Math.max(m.c, m.p) >= 20 && Math.abs(m.c - m.p) >= 5);
    const up = all
      .filter((m) => m.c > m.p)
      .sort((a, b) => b.c - b.p - (a.c - a.p) || a.path.localeCompare(b.path));
    expect(report.movers.up.map((m) => [m.path, m.abs])).toEqual(
      up.slice(0, 5).map((m) => [m.path, m.c - m.p]),
    );
    const down = all
      .filter((m) => m.c < m.p)
      .sort((a, b) => a.c - a.p - (b.c - b.p) || a.path.localeCompare(b.path));
    expect(report.movers.down.map((m) => [m.path, m.abs])).toEqual(
      down.slice(0, 5).map((m) => [m.path, m.c - m.p]),
    );

    expect(report.points.map((p) => p.label)).toEqual([
      'Nov 1',
      'Nov 2',
      'Nov 3',
      'Nov 4',
      'Nov 5',
      'Nov 6',
      'Nov 7',
    ]);
    for (const p of report.points) {
      expect({ human: p.human, ai: p.ai, total: p.total }).toEqual(
        truthFor({ from: p.from, to: p.to, days: 1, timeZone: 'UTC' }).totals,
      );
    }
    expect(report.scan).toMatchObject({
      current: { complete: true },
      previous: { complete: true },
      stoppedBy: null,
    });
  });

  it('asks within 1..250, pages by offset, and stops at hasMore=false', async () => {
    const r = range('2026-11-01 2026-11-07');
    const report = await service().build(r);
    const reqs = visitorRequests();
    for (const q of reqs) {
      const limit = Number(q.query.limit);
      expect(limit).toBeGreaterThanOrEqual(1);
      expect(limit).toBeLessThanOrEqual(250);
    }
    const { dateFrom } = apiParams(r);
    const pages = reqs.filter((q) => q.query.dateFrom === dateFrom && q.query.limit === '250');
    expect(pages.map((q) => Number(q.query.offset))).toEqual(
      Array.from({ length: Math.ceil(report.rows.length / 250) }, (_, i) => i * 250),
    );
    expect(report.scan.requests).toBe(reqs.length);
  });

  it('deduplicates a path repeated when the order shifts between pages', async () => {
    api.inject('visitors', { shiftOrder: true }, 3);
    const report = await service().build(range('2026-11-01 2026-11-07'));
    expect(new Set(report.rows.map((x) => x.path)).size).toBe(report.rows.length);
  });
});

describe('limits', () => {
  it('labels a report cut short by the per-report cap, scanning both periods by turns', async () => {
    api.setSite({ paths: 3_000 });
    const report = await service({ maxRequests: 16 }).build(range('2026-11-01 2026-11-07'));
    expect(report.scan).toMatchObject({
      requests: 16,
      stoppedBy: 'cap',
      current: { complete: false },
      previous: { complete: false },
    });
    // 2 first pages + 7 points leave 7 more pages, taken by turns: 5 × 250 rows now, 4 × 250 before.
    expect(report.rows).toHaveLength(1_250);
    expect(report.previousRows.size).toBe(1_000);
    const notes = footnotes(report);
    expect(notes[0]).toContain('Top pages among 1,250 paths scanned; the site has more');
    expect(notes[1]).toContain('Movers compare only pages scanned in both periods');
    expect(report.movers.down.every((m) => m.current > 0)).toBe(true); // no invented falls
    expect(report.movers.up.every((m) => m.previous > 0)).toBe(true); // no invented jumps
  });

  it('still finds movers on a site too big to scan whole, from pages seen in both periods', async () => {
    api.setSite({ paths: 4_000 });
    const r = range('2026-11-01 2026-11-07');
    const report = await service({ maxRequests: 20 }).build(r);
    expect(report.scan.current.complete).toBe(false);
    expect(report.scan.previous.paths).toBeGreaterThan(0);
    const movers = [...report.movers.up, ...report.movers.down];
    expect(movers.length).toBeGreaterThan(0);
    const cur = new Map(truthFor(r).rows.map((x) => [x.path, x.total]));
    const prev = new Map(truthFor(previousRange(r)).rows.map((x) => [x.path, x.total]));
    for (const m of movers) {
      expect([m.current, m.previous]).toEqual([cur.get(m.path), prev.get(m.path)]);
    }
  });

  it('says so when only the previous period was cut short', async () => {
    api.setSite({ paths: 1_500 });
    const report = await service({ maxRequests: 16 }).build(range('2026-11-01 2026-11-07'));
    expect(report.scan).toMatchObject({
      stoppedBy: 'cap',
      current: { complete: true },
      previous: { complete: false },
    });
    expect(footnotes(report)[0]).toContain('Movers compare only');
  });

  it('refuses cleanly when the analytics budget is spent, saying when it refreshes', async () => {
    const err = await service({ budget: 5 })
      .build(range('2026-11-01 2026-11-07'))
      .catch((e) => e);
    expect(err).toBeInstanceOf(BudgetExhausted);
    expect(err.retryAt.getTime()).toBe(NOW + 3_600_000);
    expect(visitorRequests()).toHaveLength(5); // the sixth was never sent
  });

  it('posts what it scanned when the budget runs out while paging', async () => {
    const report = await service({ budget: 12 }).build(range('2026-11-01 2026-11-07'));
    expect(report.scan.stoppedBy).toBe('budget');
    expect(footnotes(report)[0]).toContain('analytics budget ran out');
    expect(visitorRequests()).toHaveLength(12);
  });
});

describe('caching', () => {
  it('reuses a report for ten minutes, then builds it again', async () => {
    const s = service();
    const r = range('2026-11-01 2026-11-07');
    await s.build(r);
    const n = visitorRequests().length;
    await s.build(r);
    expect(visitorRequests()).toHaveLength(n);
    clock += 11 * 60_000;
    await s.build(r);
    expect(visitorRequests().length).toBeGreaterThan(n);
  });

  it('keeps settled days for good, across service instances, but always asks for today', async () => {
    await service().build(range('2026-11-01 2026-11-07'));
    const before = visitorRequests().length;
    await service().build(range('2026-11-01 2026-11-07'));
    const second = visitorRequests().slice(before);
    expect(second.filter((q) => q.query.limit === '1')).toHaveLength(0); // every point kept
    const withToday = range('2026-11-16 2026-11-22');
    await service().build(withToday);
    await service().build(withToday);
    const todayFrom = apiParams({
      from: '2026-11-22',
      to: '2026-11-23',
      days: 1,
      timeZone: 'UTC',
    }).dateFrom;
    expect(
      visitorRequests().filter((q) => q.query.dateFrom === todayFrom && q.query.limit === '1'),
    ).toHaveLength(2);
  });

  it('keeps a day only once it has settled (6 h after it ends), and replaces an early point', async () => {
    const day = { from: '2026-11-21', to: '2026-11-22', days: 1, timeZone: 'UTC' };
    const p = apiParams(day);
    const key = `${p.dateFrom}|${p.dateTo}`;
    const asked = () =>
      visitorRequests().filter((q) => q.query.dateFrom === p.dateFrom && q.query.limit === '1');
    // Kept by an older version at 00:05, short of what the day turned out to be.
    await store.putVisitorPoint(
      SINGLE_WORKSPACE,
      key,
      { human: 1, ai: 1, total: 1 },
      Date.parse('2026-11-22T00:05:00Z'),
    );
    clock = Date.parse('2026-11-22T05:59:00Z'); // not settled yet
    const r = range('7d');
    const early = await service().build(r);
    expect(early.points.at(-1)).toMatchObject(truthFor(day).totals);
    expect(await store.getVisitorPoint(SINGLE_WORKSPACE, key)).toMatchObject({ total: 1 }); // not kept yet
    clock = Date.parse('2026-11-22T06:00:00Z'); // settled: fetched again, and kept
    const settled = await service().build(r);
    expect(settled.points.at(-1)).toMatchObject(truthFor(day).totals);
    expect(await store.getVisitorPoint(SINGLE_WORKSPACE, key)).toEqual({
      ...truthFor(day).totals,
      fetchedAt: clock,
    });
    clock += 3_600_000;
    await service().build(r);
    expect(asked()).toHaveLength(2); // at 05:59 and 06:00, never again
  });

  it("asks for the previous period's totals once, with its first page", async () => {
    const r = range('2026-11-01 2026-11-07');
    await service().build(r);
    const { dateFrom } = apiParams(previousRange(r));
    const previous = visitorRequests().filter((q) => q.query.dateFrom === dateFrom);
    const pages = Math.ceil(truthFor(previousRange(r)).rows.length / 250);
    expect(pages).toBeGreaterThan(1);
    expect(previous.map((q) => [q.query.limit, q.query.offset])).toEqual(
      Array.from({ length: pages }, (_, i) => ['250', String(i * 250)]),
    );
  });
});

describe('API errors', () => {
  it.each([
    ['500', { status: 500 as const }, Unavailable, 5],
    [
      '400',
      { status: 400 as const, details: [{ path: ['dateFrom'], message: 'Invalid date' }] },
      InvalidRequest,
      1,
    ],
    ['malformed body', { malformed: true as const }, MalformedResponse, 1],
  ])(
    'fails the report on %s instead of passing off half of it',
    async (_name, fault, type, times) => {
      api.inject('visitors', fault, times);
      const s = service();
      await expect(s.build(range('2026-11-01 2026-11-07'))).rejects.toBeInstanceOf(type);
      api.requests.length = 0;
      await s.build(range('2026-11-01 2026-11-07')); // nothing half-built was cached
      expect(visitorRequests().length).toBeGreaterThan(0);
    },
  );
});

it('sends DST-correct instants for a Los Angeles week', async () => {
  clock = Date.parse('2026-11-10T12:00:00Z');
  await service().build(range('2026-10-26 2026-11-01', 'America/Los_Angeles'));
  const first = visitorRequests()[0]!;
  expect(first.query).toMatchObject({
    dateFrom: '2026-10-26T07:00:00.000Z',
    dateTo: '2026-11-02T08:00:00.000Z',
  });
});
