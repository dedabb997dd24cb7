import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ApiClient } from '../../src/api/client.ts';
import { memoryLogger } from '../helpers/log.ts';
import { PII, TYPED_TERMS } from './analytics-insights-hostile.ts';
import { ApiEmulator } from './api-emulator.ts';

/** The emulator's mix of what real readers bring: personal data, typing prefixes, percent CTRs. */

const KEY = 'mint_insights_mix_key';
const PROJECT = 'proj_ins';
const NOW = Date.parse('2026-11-22T12:00:00Z');
const TWO_WEEKS = { dateFrom: '2026-11-08', dateTo: '2026-11-22' };
const logs = memoryLogger([KEY], 'warn');

let api: ApiEmulator;
const client = () =>
  new ApiClient({ baseUrl: api.url, apiKey: KEY, projectId: PROJECT, log: logs.log });

beforeEach(async () => {
  api = await ApiEmulator.start({ apiKey: KEY, projectId: PROJECT, now: () => NOW });
});
afterEach(async () => {
  await api.close();
});

async function everything() {
  const c = client();
  const [searches, assistant, feedback, byPage] = await Promise.all([
    c.getSearchesPage({ ...TWO_WEEKS, limit: 100 }),
    c.getAssistantPage({ ...TWO_WEEKS, limit: 1000 }),
    c.getFeedbackPage({ ...TWO_WEEKS, limit: 100 }),
    c.getFeedbackByPage({ ...TWO_WEEKS, limit: 100 }),
  ]);
  return { searches, assistant, feedback, byPage };
}

describe('the emulator mix', () => {
  it('holds none of it by default', async () => {
    const all = await everything();
    expect(JSON.stringify(all)).not.toContain(PII.email);
    expect(all.searches.searches.map((s) => s.searchQuery)).not.toContain('rate lim');
  });

  it('puts personal data in questions, pages, search terms, comments and paths', async () => {
    api.insights.mix({ pii: true });
    const { searches, assistant, feedback, byPage } = await everything();
    const asked = assistant.conversations.filter((c) => c.query.includes(PII.mintKey));
    expect(asked).toHaveLength(4);
    expect(asked.every((c) => c.resolutionStatus === 'unanswered')).toBe(true);
    expect(asked[0]?.pageUrl).toContain(`api_key=${PII.mintKey}`);
    const term = searches.searches.find((s) => s.searchQuery === PII.email);
    expect(term).toMatchObject({ ctr: 0, topClickedPage: null });
    expect(term?.hits).toBeGreaterThanOrEqual(5 * 14);
    // The latest comments on the most disliked page.
    const latest = feedback.feedback.filter((f) => f.path === '/guides/authentication');
    expect(latest.slice(0, 2).map((f) => f.comment)).toEqual([
      expect.stringContaining(PII.openAiKey),
      expect.stringContaining(PII.phone),
    ]);
    expect(byPage.feedback.map((p) => p.path)).toContain(`/guides/reset?token=${PII.pathToken}`);
  });

  it('logs typing prefixes seconds before the term, never clicked', async () => {
    api.insights.mix({ typingPrefixes: true });
    const { searches } = await everything();
    const row = (q: string) => searches.searches.find((s) => s.searchQuery === q);
    const [term] = TYPED_TERMS;
    for (const p of term!.prefixes) {
      expect(row(p.text)).toMatchObject({ ctr: 0, topClickedPage: null });
      expect(row(p.text)!.hits).toBeLessThanOrEqual(row(term!.term)!.hits);
      expect(Date.parse(row(p.text)!.lastSearchedAt)).toBeLessThan(
        Date.parse(row(term!.term)!.lastSearchedAt),
      );
    }
    expect(row('api')).toBeDefined();
    expect(row('auth')!.hits).toBeGreaterThan(row('authentication')!.hits);
  });

  it('sends ctr as a percentage when asked to, the same clicks', async () => {
    const before = (await everything()).searches.searches;
    api.insights.mix({ ctrUnit: 'percent' });
    const after = (await everything()).searches.searches;
    expect(after.map((r) => r.searchQuery)).toEqual(before.map((r) => r.searchQuery));
    for (const [i, r] of after.entries()) expect(r.ctr / 100).toBeCloseTo(before[i]!.ctr, 3);
    expect(Math.max(...after.map((r) => r.ctr))).toBeGreaterThan(1);
  });
});
