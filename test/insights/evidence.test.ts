import { describe, expect, it } from 'vitest';
import { draftPrompt, type GapEvidence, PROMPT_MAX } from '../../src/insights/evidence.ts';

const long = (s: string) => `${s} ${'very '.repeat(60)}long`.slice(0, 300);

function evidence(over: Partial<GapEvidence> = {}): GapEvidence {
  return {
    kind: 'question',
    title: 'How do I rotate API keys?',
    period: { from: '2026-11-01', to: '2026-11-15', days: 14, timeZone: 'Europe/Paris' },
    asked: 40,
    searched: 90,
    ctr: 0.02,
    page: null,
    wordings: Array.from({ length: 10 }, (_, i) => ({ text: long(`wording ${i}`), count: 10 - i })),
    searches: Array.from({ length: 10 }, (_, i) => ({
      text: long(`search ${i}`),
      hits: 9,
      ctr: 0,
    })),
    pages: Array.from({ length: 5 }, (_, i) => ({ path: `/guides/page-${i}`, count: 5 - i })),
    comments: Array.from({ length: 5 }, (_, i) => ({
      path: '/guides/authentication',
      text: long(`comment ${i}`),
      count: 2,
    })),
    distinct: { wordings: 25, searches: 12, comments: 5, pages: 5 },
    ...over,
  };
}

describe('the Draft it prompt', () => {
  it('fits the form, cutting the longest lists from their end and saying how many it left out', () => {
    const prompt = draftPrompt(evidence());
    expect(prompt.length).toBeLessThanOrEqual(PROMPT_MAX);
    expect(prompt).toContain('between Nov 1 – Nov 14, 2026 (Europe/Paris)');
    expect(prompt).toContain('"wording 0 very');
    expect(prompt).toMatch(/\(and \d+ more wordings\)/);
    expect(prompt).toMatch(/\(and \d+ more search terms\)/);
    expect(prompt).toContain('clicked a result 2% of the time');
    // The instructions are never what is cut.
    expect(prompt).toContain('Look for an existing page that covers this first');
    expect(prompt).toContain('Do not invent product facts');
    expect(prompt).toMatch(/list every TODO left for a human\.$/);
  });

  it('says all of a small gap, and writes a search or a page its own first step', () => {
    const small = evidence({
      kind: 'search',
      asked: 0,
      wordings: [],
      searches: [{ text: 'okta', hits: 12, ctr: 0 }],
      pages: [],
      comments: [],
      ctr: 0,
      distinct: { wordings: 0, searches: 1, comments: 0, pages: 0 },
    });
    const prompt = draftPrompt(small);
    expect(prompt).toContain(
      '- Searched the docs 90 times and clicked no result:\n  - "okta" (12 times, no clicks)',
    );
    expect(prompt).not.toContain('more');
    expect(prompt).toContain(
      'A search nobody clicks often means the page exists but is hard to find',
    );
    const page = draftPrompt(
      evidence({
        kind: 'page',
        asked: 0,
        searched: 0,
        page: { path: '/guides/authentication', thumbsDown: 19, thumbsUp: 3 },
        wordings: [],
        searches: [],
        pages: [],
        distinct: { wordings: 0, searches: 0, comments: 5, pages: 0 },
      }),
    );
    expect(page).toMatch(/^Improve the docs page \/guides\/authentication/);
    expect(page).toContain(
      '- Gave the page /guides/authentication 19 times a thumbs down (86.4% of votes).',
    );
    expect(page).toContain('1. Read the page and the comments');
  });
});
