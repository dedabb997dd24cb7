import { describe, expect, it } from 'vitest';
import { MAX_PAGES, planRequests } from '../../src/insights/plan.ts';

describe('request plan', () => {
  it('with room to spare, plans every source up to its ceiling', () => {
    const r = planRequests({ cap: 100, budgetLeft: null, previousCached: false });
    if (!r.ok) throw new Error('no plan');
    expect(r.plan.pages).toEqual(MAX_PAGES);
    expect(r.plan.total).toBe(Object.values(MAX_PAGES).reduce((a, b) => a + b, 0));
    expect(r.plan.limitedBy).toBeNull();
  });

  it('fits the cap: core, comparison, then extras in order', () => {
    const r = planRequests({ cap: 8, budgetLeft: 90, previousCached: false });
    if (!r.ok) throw new Error('no plan');
    expect(r.plan.pages).toMatchObject({
      searches: 2,
      assistant: 2,
      byPage: 1,
      feedback: 1,
      previousSearches: 1,
      previousByPage: 1,
      previousAssistant: 0,
    });
    expect(r.plan).toMatchObject({ total: 8, limitedBy: 'cap' });
  });

  it('fits what is left of the hourly budget, and says so', () => {
    const r = planRequests({ cap: 20, budgetLeft: 4, previousCached: false });
    if (!r.ok) throw new Error('no plan');
    // Too few for the comparison (2) after the core (3): one more assistant page instead.
    expect(r.plan.pages).toMatchObject({
      searches: 1,
      assistant: 2,
      byPage: 1,
      previousSearches: 0,
    });
    expect(r.plan).toMatchObject({ total: 4, limitedBy: 'budget' });
  });

  it('skips the previous period when it is cached', () => {
    const r = planRequests({ cap: 100, budgetLeft: 100, previousCached: true });
    if (!r.ok) throw new Error('no plan');
    expect(r.plan.pages).toMatchObject({
      previousSearches: 0,
      previousByPage: 0,
      previousAssistant: 0,
    });
    expect(r.plan.limitedBy).toBeNull();
  });

  it('refuses when not even the core fits', () => {
    expect(planRequests({ cap: 20, budgetLeft: 2, previousCached: false })).toEqual({
      ok: false,
      need: 3,
      allowance: 2,
      limitedBy: 'budget',
    });
  });
});

describe('what a report wanted', () => {
  it('wants every source up to its ceiling, and no previous period when cached', () => {
    const fresh = planRequests({ cap: 5, budgetLeft: null, previousCached: false });
    const cached = planRequests({ cap: 5, budgetLeft: null, previousCached: true });
    if (!fresh.ok || !cached.ok) throw new Error('no plan');
    expect(fresh.plan.wanted).toEqual(MAX_PAGES);
    expect(cached.plan.wanted).toMatchObject({ previousSearches: 0, previousAssistant: 0 });
    expect(fresh.plan.limitedBy).toBe('cap');
  });
});
