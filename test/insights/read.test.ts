import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type Budget, slidingWindowBudget } from '../../src/api/budget.ts';
import { BudgetExhausted, Stopped } from '../../src/api/errors.ts';
import { planRequests } from '../../src/insights/plan.ts';
import { type Pager, PlannedReader } from '../../src/insights/read.ts';
import { openSqliteStore } from '../../src/store/sqlite.ts';
import type { Store } from '../../src/store/types.ts';

/** The planned reader with a meter: one use of a retry allowance before each request. */

const NOW = Date.parse('2026-11-22T12:00:00Z');
let store: Store;
let dir: string;

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'insights-read-'));
  store = await openSqliteStore(join(dir, 'bot.sqlite'));
});
afterEach(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

const meter = (limit: number): Budget =>
  slidingWindowBudget(store, {
    key: 'retries',
    limit,
    windowMs: 86_400_000,
    description: 'The retry allowance',
    now: () => NOW,
  });
const used = () => store.budgetUsed('retries', 0);

function plan() {
  const r = planRequests({ cap: 100, budgetLeft: null, previousCached: true });
  if (!r.ok) throw new Error('no plan');
  return r.plan;
}

/** Pages 1, 2, 3… of a source, `fail` thrown instead of page `failAt`. */
function pages(n: number, fail?: { at: number; err: Error }): Pager<number> & { asked: number } {
  const pager = {
    asked: 0,
    async fetch(cursor: string | null) {
      pager.asked++;
      const page = cursor === null ? 1 : Number(cursor);
      if (fail && page === fail.at) throw fail.err;
      return page;
    },
    next: (page: number) => (page < n ? String(page + 1) : null),
  };
  return pager;
}

describe('a meter on the reader', () => {
  it('takes one use per request, and halts the optional pages when it has none left', async () => {
    const reader = new PlannedReader(plan(), meter(2));
    expect(await reader.read('assistant', pages(5), { required: true, upTo: 1 })).toEqual([1]);
    expect(await reader.read('assistant', pages(5))).toEqual([1, 2]);
    expect(reader.stoppedBy).toBe('budget');
    expect(reader.requests).toBe(2);
    expect(await used()).toBe(2);
  });

  it('fails a required first page when it has none left', async () => {
    const spent = meter(1);
    await spent.take('earlier');
    const reader = new PlannedReader(plan(), spent);
    await expect(reader.read('searches', pages(1), { required: true })).rejects.toBeInstanceOf(
      BudgetExhausted,
    );
  });

  it('gives the use back when the analytics budget refused the request before it was sent', async () => {
    const refused = new BudgetExhausted('assistant.get', 'The analytics budget', new Date(NOW));
    const reader = new PlannedReader(plan(), meter(5));
    await reader.read('assistant', pages(5, { at: 2, err: refused }));
    expect(reader.requests).toBe(1);
    expect(await used()).toBe(1);
  });

  it('lets a stop propagate, even on an optional page', async () => {
    const reader = new PlannedReader(plan());
    const stopped = new Stopped('assistant.get', 'no');
    await expect(reader.read('assistant', pages(5, { at: 2, err: stopped }))).rejects.toBe(stopped);
  });
});
