import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ApiClient } from '../../src/api/client.ts';
import { Unavailable } from '../../src/api/errors.ts';
import { coverageNotes } from '../../src/insights/notes.ts';
import { createInsightsService } from '../../src/insights/service.ts';
import { apiParams, type DateRange, parseVisitorsArgs } from '../../src/reports/range.ts';
import { openSqliteStore } from '../../src/store/sqlite.ts';
import type { Store } from '../../src/store/types.ts';
import type { Fault, RequestKind } from '../fakes/api-emulator.ts';
import { ApiEmulator } from '../fakes/api-emulator.ts';
import { memoryLogger } from '../helpers/log.ts';

/**
 * A failure on an optional page (any page after the 3 core first pages, plan.ts) leaves a
 * report of what was read, with a note saying what is missing and why.
 */

const KEY = 'mint_insights_robust_key';
const PROJECT = 'proj_ins';
const NOW = Date.parse('2026-11-22T12:00:00Z');
const INSIGHT_KINDS = ['searches', 'assistant', 'feedback', 'feedbackByPage'] as const;
let api: ApiEmulator;
let store: Store;
let dir: string;
const logs = memoryLogger([KEY], 'info');

function service() {
  const client = new ApiClient({
    baseUrl: api.url,
    apiKey: KEY,
    projectId: PROJECT,
    log: logs.log,
    timeoutMs: 300,
    retry: { retries: 1, minDelayMs: 1, maxDelayMs: 5, maxRetryAfterMs: 50 },
  });
  return createInsightsService({ api: client, log: logs.log, maxRequests: 100, now: () => NOW });
}

function range(text: string): DateRange {
  const r = parseVisitorsArgs(text, new Date(NOW), 'UTC');
  if (!r.ok) throw new Error(r.error);
  return r.range;
}

const insightRequests = () =>
  api.requests.filter((r) => (INSIGHT_KINDS as readonly unknown[]).includes(r.kind));

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'insights-robust-'));
  store = await openSqliteStore(join(dir, 'bot.sqlite'));
  api = await ApiEmulator.start({ apiKey: KEY, projectId: PROJECT, now: () => NOW });
});
afterEach(async () => {
  await api.close();
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

const MONTH = range('30d');
const PREVIOUS_FROM = apiParams({ ...MONTH, from: '2026-09-23', to: '2026-10-22' }).dateFrom;

/** The optional pages a fault is put on, by what the request asks. */
const OPTIONAL: Record<
  string,
  { kind: RequestKind; when: (q: Record<string, string>) => boolean; source: string }
> = {
  'the first feedback page': { kind: 'feedback', when: () => true, source: 'feedback' },
  'the second searches page': { kind: 'searches', when: (q) => 'cursor' in q, source: 'searches' },
  "the previous period's searches": {
    kind: 'searches',
    when: (q) => q.dateFrom === PREVIOUS_FROM,
    source: 'previousSearches',
  },
};

const FAULTS: [string, Fault, string, string][] = [
  ['429', { status: 429 }, 'rate_limited', 'was rate limiting (429)'],
  ['503', { status: 503 }, 'unavailable', 'answered 503'],
  ['a timeout', { slowMs: 1_000 }, 'timeout', 'did not answer in time'],
  ['an unreadable answer', { malformed: true }, 'malformed', 'could not be read'],
  ['a wrong shape', { wrongShape: true }, 'malformed', 'could not be read'],
];

describe('a failure on an optional page', () => {
  describe.each(Object.entries(OPTIONAL))('on %s', (_where, page) => {
    it.each(FAULTS)(
      '%s leaves a report of what was read, saying what is missing',
      async (_n, fault, kind, why) => {
        api.inject(page.kind, fault, 10, page.when);
        const report = await service().build(MONTH);
        expect(report.stoppedBy).toBe('failed');
        const coverage = report.coverage[page.source as keyof typeof report.coverage];
        expect(coverage.failed?.kind).toBe(kind);
        // What the core pages hold is there.
        expect(report.topSearches[0]?.searchQuery).toBe('quickstart');
        expect(report.questionGaps.length).toBeGreaterThan(0);
        expect(report.disliked[0]?.path).toBe('/guides/authentication');
        const [note] = coverageNotes(report);
        expect(note).toMatch(/^Could not read .*: the Mintlify API /);
        expect(note).toContain(why);
        expect(note).toContain('Missing: ');
        expect(note).toContain('The report shows what was read.');
        expect(logs.text()).toMatch(/"failed":\{".*"insights\.built"/);
      },
    );
  });

  it('asks nothing more once the service is struggling (503), and shows what it had', async () => {
    api.inject('feedback', { status: 503 }, 10);
    const report = await service().build(MONTH);
    const sent = insightRequests();
    // The failed page's two attempts are the last requests: searches' later pages are not asked.
    expect(sent.slice(-2).map((r) => r.kind)).toEqual(['feedback', 'feedback']);
    expect(report.coverage.searches).toMatchObject({ pages: 1, complete: false });
    expect(report.coverage.feedback).toMatchObject({ pages: 0 });
    expect(coverageNotes(report)[0]).toBe(
      "Could not read feedback comments: the Mintlify API answered 503. Missing: search terms (1 page read, more left), feedback comments (not read), the previous period's questions (not read). The report shows what was read.",
    );
    expect(report.disliked[0]?.comments).toEqual([]);
  });

  it('goes on with the other sources after an answer it could not read', async () => {
    api.inject('feedback', { malformed: true }, 10);
    const report = await service().build(MONTH);
    expect(report.coverage.feedback.failed?.kind).toBe('malformed');
    expect(report.coverage.searches.pages).toBeGreaterThan(1);
    expect(report.coverage.previousAssistant.pages).toBeGreaterThan(0);
  });

  it('leaves the comparison out when the previous period cannot be read', async () => {
    api.inject('searches', { status: 503 }, 10, (q) => q.dateFrom === PREVIOUS_FROM);
    const report = await service().build(MONTH);
    expect(report.previousCounts).toBeUndefined();
    expect(report.changes).toEqual({});
  });

  it('is not kept as a settled report: the next one reads again', async () => {
    const lastWeek = range('2026-11-08 2026-11-14');
    api.inject('feedback', { status: 503 }, 2);
    const insights = service();
    const first = await insights.build(lastWeek);
    expect(first).toMatchObject({ closed: true, stoppedBy: 'failed' });
    const again = await insights.build(lastWeek);
    expect(again.stoppedBy).toBeNull();
    expect(again.requests).toBeGreaterThan(0);
  });

  it('still fails the report when a core page fails', async () => {
    api.inject('feedbackByPage', { status: 503 }, 10);
    await expect(service().build(range('7d'))).rejects.toBeInstanceOf(Unavailable);
  });
});
