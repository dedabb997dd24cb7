import { describe, expect, it } from 'vitest';
import { emptyItem, type GapItem } from '../../src/insights/gaps.ts';
import { impactOf } from '../../src/insights/impact.ts';

const at = (iso: string) => Date.parse(iso);
const week = { from: '2026-11-09', to: '2026-11-16', days: 7, timeZone: 'UTC' };
const before = { asked: 14, searched: 40, from: '2026-10-26', to: '2026-11-09', days: 14 };

function item(over: Partial<GapItem>): GapItem {
  const key = 'api key rotat';
  return {
    ...emptyItem('question', undefined, 'How do I rotate API keys?'),
    key,
    signatures: [key],
    ...over,
  };
}

describe('did it work?', () => {
  it('counts a whole period after the pull request, questions and searches', () => {
    const pr = at('2026-11-05T12:00:00Z');
    const i = item({
      asked: 2,
      askedAt: [at('2026-11-10T00:00:00Z'), at('2026-11-12T00:00:00Z')],
      searched: 9,
    });
    expect(impactOf(pr, before, i, week).since).toEqual({
      from: at('2026-11-09T00:00:00Z'),
      days: 7,
      asked: 2,
      askedAtLeast: false,
      searched: 9,
    });
  });

  it('splits questions at the pull request; searches only when none came after it', () => {
    const pr = at('2026-11-12T00:00:00Z');
    const askedAt = [at('2026-11-10T00:00:00Z'), at('2026-11-13T00:00:00Z')];
    const late = item({ asked: 2, askedAt, searched: 9, searchedLastAt: '2026-11-14T12:00:00Z' });
    expect(impactOf(pr, before, late, week).since).toMatchObject({
      days: 4,
      asked: 1,
      searched: null,
    });
    const early = item({ asked: 2, askedAt, searched: 9, searchedLastAt: '2026-11-11T12:00:00Z' });
    expect(impactOf(pr, before, early, week).since).toMatchObject({ searched: 0 });
  });

  it('says a need gone from the report was met 0 times, and a PR after the period is not judged yet', () => {
    expect(impactOf(at('2026-11-12T00:00:00Z'), before, undefined, week).since).toMatchObject({
      asked: 0,
      searched: 0,
    });
    expect(impactOf(at('2026-11-16T00:00:00Z'), before, undefined, week).since).toBeUndefined();
  });

  it('says "at least" when the report kept only the latest questions and all of them are since', () => {
    const pr = at('2026-11-09T00:00:00Z');
    const i = item({ asked: 1500, askedAt: [at('2026-11-10T00:00:00Z')] });
    expect(impactOf(pr, before, i, week).since).toMatchObject({ asked: 1, askedAtLeast: true });
  });
});
