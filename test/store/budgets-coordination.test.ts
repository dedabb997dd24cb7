import { expect, it } from 'vitest';
import { SINGLE_WORKSPACE as WS } from '../../src/store/scope.ts';
import { describeEachEngine } from '../helpers/store-engines.ts';

describeEachEngine('store: budgets, coordination and digests', (db) => {
  it('keeps the last report headline, replacing the one before', async () => {
    expect(await db.store.lastReportHeadline(WS)).toBeUndefined();
    const h = {
      from: '2026-01-01',
      to: '2026-01-08',
      timeZone: 'UTC',
      totals: { human: 10, ai: 5, total: 14 },
      previousTotals: { human: 8, ai: 1, total: 9 },
      partial: false,
      generatedAt: 1_767_000_000_000,
    };
    await db.store.putReportHeadline(WS, h);
    expect(await db.store.lastReportHeadline(WS)).toEqual(h);
    const next = {
      ...h,
      from: '2026-01-08',
      to: '2026-01-15',
      partial: true,
      generatedAt: h.generatedAt + 1,
    };
    await db.store.putReportHeadline(WS, next);
    expect(await db.store.lastReportHeadline(WS)).toEqual(next);
  });

  it('says when the oldest budget use in a window was', async () => {
    expect(await db.store.oldestBudgetUse('agent:p', 0)).toBeNull();
    for (const at of [50, 20, 80]) await db.store.takeBudgetSlot('agent:p', at, 1_000, 10);
    await db.store.takeBudgetSlot('analytics', 5, 1_000, 10);
    expect(await db.store.oldestBudgetUse('agent:p', 0)).toBe(20);
    expect(await db.store.oldestBudgetUse('agent:p', 20)).toBe(50); // after 20, not at it
    // Housekeeping forgets uses older than its horizon, in every bucket, taken from or not.
    await db.store.pruneEvents(50);
    expect(await db.store.oldestBudgetUse('agent:p', 0)).toBe(50);
    expect(await db.store.oldestBudgetUse('analytics', 0)).toBeNull();
  });

  it('claims an event once, by any of its keys', async () => {
    expect(await db.store.claimEvent(['event:Ev1', 'msg:C1:1.1'], 0)).toBe(true);
    expect(await db.store.claimEvent(['event:Ev1', 'msg:C1:1.1'], 1)).toBe(false);
    expect(await db.store.claimEvent(['event:Ev2', 'msg:C1:1.1'], 2)).toBe(false);
    expect(await db.store.eventSeen('event:Ev1')).toBe(true);
    expect(await db.store.eventSeen('event:Ev3')).toBe(false);
    expect(await db.store.claimEvent(['event:Ev3'], 3)).toBe(true); // looking did not record it
    await db.store.pruneEvents(10);
    expect(await db.store.eventSeen('event:Ev1')).toBe(false);
    expect(await db.store.claimEvent(['event:Ev1'], 11)).toBe(true);
  });

  it('gives no slot from a budget of nothing', async () => {
    expect(await db.store.takeBudgetSlot('agent:p', 5, 1_000, 0)).toEqual({
      ok: false,
      retryAtMs: 1_005,
    });
    expect(await db.store.budgetUsed('agent:p', 0)).toBe(0);
  });

  it('keeps a sliding one-hour budget and says when the next slot opens', async () => {
    const hour = 3_600_000;
    for (let i = 0; i < 3; i++)
      expect((await db.store.takeBudgetSlot('agent:p', 1000 + i, hour, 3)).ok).toBe(true);
    expect(await db.store.takeBudgetSlot('agent:p', 2000, hour, 3)).toEqual({
      ok: false,
      retryAtMs: 1000 + hour,
    });
    expect((await db.store.takeBudgetSlot('analytics:o', 2000, hour, 3)).ok).toBe(true);
    expect((await db.store.takeBudgetSlot('agent:p', 1000 + hour, hour, 3)).ok).toBe(true);
    // The use at 1001 has left the window; 1002, 1000+h and this one fill it again.
    expect((await db.store.takeBudgetSlot('agent:p', 1001 + hour, hour, 3)).ok).toBe(true);
    const r = await db.store.takeBudgetSlot('agent:p', 1001 + hour, hour, 3);
    expect(r).toEqual({ ok: false, retryAtMs: 1002 + hour });
  });

  it('gives a released slot back', async () => {
    const first = await db.store.takeBudgetSlot('k', 0, 1000, 1);
    expect((await db.store.takeBudgetSlot('k', 1, 1000, 1)).ok).toBe(false);
    if (first.ok) await db.store.releaseBudgetSlot(first.slotId);
    expect((await db.store.takeBudgetSlot('k', 2, 1000, 1)).ok).toBe(true);
  });

  it('keeps visitor points durably; a later put replaces the point and its fetch time', async () => {
    expect(await db.store.getVisitorPoint(WS, 'a|b')).toBeUndefined();
    await db.store.putVisitorPoint(WS, 'a|b', { human: 3, ai: 2, total: 4 }, 1);
    await db.store.putVisitorPoint(WS, 'c|d', { human: 1, ai: 1, total: 1 }, 1);
    expect(await db.store.getVisitorPoint(WS, 'a|b')).toEqual({
      human: 3,
      ai: 2,
      total: 4,
      fetchedAt: 1,
    });
    await db.store.putVisitorPoint(WS, 'a|b', { human: 9, ai: 8, total: 12 }, 2);
    await db.store.close();
    db.store = await db.place.open();
    expect(await db.store.getVisitorPoint(WS, 'a|b')).toEqual({
      human: 9,
      ai: 8,
      total: 12,
      fetchedAt: 2,
    });
    expect(await db.store.getVisitorPoint(WS, 'c|d')).toEqual({
      human: 1,
      ai: 1,
      total: 1,
      fetchedAt: 1,
    });
  });

  it('lets one owner claim a digest period; posted stays posted; a stale claim is taken over', async () => {
    expect(await db.store.claimDigest(WS, 'C1', '2026-W47', 'a', 1000, 600_000)).toEqual({
      state: 'claimed',
    });
    expect(await db.store.claimDigest(WS, 'C1', '2026-W47', 'b', 2000, 600_000)).toEqual({
      state: 'busy',
      owner: 'a',
    });
    expect(await db.store.claimDigest(WS, 'C2', '2026-W47', 'b', 2000, 600_000)).toEqual({
      state: 'claimed',
    });
    expect(await db.store.claimDigest(WS, 'C1', '2026-W47', 'b', 700_000, 600_000)).toEqual({
      state: 'stale',
      owner: 'a',
    });
    expect(await db.store.claimDigest(WS, 'C1', '2026-W47', 'c', 701_000, 600_000)).toEqual({
      state: 'busy',
      owner: 'b',
    });
    expect(await db.store.markDigestPosted(WS, 'C1', '2026-W47', 'a', 702_000)).toBe(false); // b's now
    expect(await db.store.markDigestPosted(WS, 'C1', '2026-W47', 'b', 702_000)).toBe(true);
    expect(await db.store.claimDigest(WS, 'C1', '2026-W47', 'c', 9_999_999, 600_000)).toEqual({
      state: 'posted',
    });
  });

  it('keeps a digest claim alive while its owner beats, and lets it go when the beats stop', async () => {
    const stale = 600_000;
    expect(await db.store.claimDigest(WS, 'C1', 'W1', 'a', 0, stale)).toEqual({ state: 'claimed' });
    expect(await db.store.heartbeatDigest(WS, 'C1', 'W1', 'a', 500_000)).toBe(true);
    // 900 s after the claim but 400 s after the last beat: still alive.
    expect(await db.store.claimDigest(WS, 'C1', 'W1', 'b', 900_000, stale)).toEqual({
      state: 'busy',
      owner: 'a',
    });
    expect(await db.store.claimDigest(WS, 'C1', 'W1', 'b', 1_100_000, stale)).toEqual({
      state: 'stale',
      owner: 'a',
    });
    expect(await db.store.heartbeatDigest(WS, 'C1', 'W1', 'a', 1_100_001)).toBe(false); // taken over
    expect(await db.store.heartbeatDigest(WS, 'C1', 'W1', 'b', 1_100_002)).toBe(true);
  });
});
