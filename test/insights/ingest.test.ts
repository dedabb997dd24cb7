import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ApiClient } from '../../src/api/client.ts';
import { createInsightsService } from '../../src/insights/service.ts';
import { type DateRange, parseVisitorsArgs } from '../../src/reports/range.ts';
import { PII, TYPED_TERMS } from '../fakes/analytics-insights-hostile.ts';
import { ApiEmulator } from '../fakes/api-emulator.ts';
import { memoryLogger } from '../helpers/log.ts';

/**
 * What the insights service makes of what real readers send (the emulator's mix): personal
 * data masked, `ctr` in either unit, typing prefixes folded. The whole report is checked,
 * as the Slack side, the digest, Draft it and the cache all read from it.
 */

const KEY = 'mint_insights_ingest_key';
const PROJECT = 'proj_ins';
const NOW = Date.parse('2026-11-22T12:00:00Z');
let api: ApiEmulator;
const logs = memoryLogger([KEY], 'info');

const service = (topN = 5) =>
  createInsightsService({
    api: new ApiClient({ baseUrl: api.url, apiKey: KEY, projectId: PROJECT, log: logs.log }),
    log: logs.log,
    maxRequests: 100,
    options: { topN },
    now: () => NOW,
  });

function range(text: string): DateRange {
  const r = parseVisitorsArgs(text, new Date(NOW), 'UTC');
  if (!r.ok) throw new Error(r.error);
  return r.range;
}

beforeEach(async () => {
  api = await ApiEmulator.start({ apiKey: KEY, projectId: PROJECT, now: () => NOW });
});
afterEach(async () => {
  await api.close();
});

describe('personal data in reader text', () => {
  it('is masked everywhere in the report, which shows the placeholders in its place', async () => {
    api.insights.mix({ pii: true });
    const report = await service(20).build(range('14d'));
    const text = JSON.stringify(report);
    for (const secret of Object.values(PII)) expect(text).not.toContain(secret);
    // The masked texts are in the lists the report shows: a question topic, search gaps,
    // the latest comments, a disliked page.
    const asked = report.questionGaps.map((t) => t.example);
    expect(asked).toContain('My key [key] returns 401, email me at [email]');
    expect(report.searchGaps.map((g) => g.topic.example)).toEqual(
      expect.arrayContaining(['[email]', '[key] invalid']),
    );
    expect(report.disliked[0]?.comments.map((c) => c.text)).toEqual(
      expect.arrayContaining([
        'my key [key] is rejected',
        'Wrong for me, reach me on [phone] or [email]',
      ]),
    );
    // What reads the same once masked is one row: two readers' addresses, two tokens.
    const p = { from: Date.parse('2026-11-08'), to: Date.parse('2026-11-22') };
    const rows = api.insights.searches(p).rows;
    const hitsOf = (q: string) => rows.find((r) => r.searchQuery === q)?.hits ?? 0;
    const emails = report.topSearches.filter((s) => s.searchQuery === '[email]');
    expect(emails.map((s) => s.hits)).toEqual([hitsOf(PII.email) + hitsOf(PII.otherEmail)]);
    const reset = report.disliked.filter((d) => d.path === '/guides/reset?token=[secret]');
    expect(reset).toHaveLength(1);
    expect(reset[0]?.thumbsDown).toBe(4);
  });
});

describe('ctr', () => {
  it('reads the same in percent as in fractions', async () => {
    const fraction = await service().build(range('30d'));
    api.insights.mix({ ctrUnit: 'percent' });
    const percent = await service().build(range('30d'));
    const ctrs = (r: typeof fraction) => r.topSearches.map((s) => [s.searchQuery, s.ctr]);
    expect(ctrs(percent)).toEqual(ctrs(fraction));
    expect(Math.max(...percent.topSearches.map((s) => s.ctr))).toBeLessThanOrEqual(1);
    // The gaps are the same: "okta" (CTR 3%) is one in either unit.
    expect(percent.searchGaps.map((g) => [g.topic.example, g.hits])).toEqual(
      fraction.searchGaps.map((g) => [g.topic.example, g.hits]),
    );
    expect(logs.text()).toContain('"ctrUnit":"percent"');
  });
});

describe('typing prefixes', () => {
  it('are folded into the query they grew into, and real short queries stay', async () => {
    api.insights.mix({ typingPrefixes: true });
    const report = await service(20).build(range('30d'));
    const gaps = report.searchGaps.map((g) => g.topic.example);
    const top = new Map(report.topSearches.map((s) => [s.searchQuery, s]));
    for (const t of TYPED_TERMS) {
      for (const p of t.prefixes) {
        expect(gaps).not.toContain(p.text);
        expect(top.has(p.text)).toBe(false);
      }
    }
    // "webhook signature", never clicked, is one gap with its prefixes' searches added.
    const signature = report.searchGaps.find((g) => g.topic.example === 'webhook signature');
    const [, typed] = TYPED_TERMS;
    const p = { from: Date.parse('2026-10-23'), to: Date.parse('2026-11-22') };
    const rows = api.insights.searches(p).rows;
    const hitsOf = (q: string) => rows.find((r) => r.searchQuery === q)?.hits ?? 0;
    const expected = [typed!.term, ...typed!.prefixes.map((x) => x.text)].reduce(
      (n, q) => n + hitsOf(q),
      0,
    );
    expect(signature?.hits).toBe(expected);
    // Typing on the way was no chance to click: "rate limits" keeps its own CTR.
    expect(top.get('rate limits')?.ctr).toBeCloseTo(0.5, 2);
    expect(top.get('auth')).toBeDefined();
    expect(top.get('api')).toBeDefined();
  });
});
