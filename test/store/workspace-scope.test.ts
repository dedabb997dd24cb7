import { expect, it } from 'vitest';
import { SINGLE_WORKSPACE } from '../../src/store/scope.ts';
import type { NewGap, ReportHeadline } from '../../src/store/types.ts';
import { describeEachEngine } from '../helpers/store-engines.ts';

/**
 * The bot's own state is per workspace (migration 0019, src/store/scope.ts): what one
 * workspace caches, keeps, claims or marks is invisible to another, even under the same key,
 * project, model or channel; the single workspace's is a third, apart from both.
 */
const A = { teamId: 'T0A', enterpriseId: null };
const B = { teamId: 'T0B', enterpriseId: null };
const ONE = SINGLE_WORKSPACE;
const DAY = 86_400_000;

const gap = (key: string): NewGap => ({
  projectId: 'proj_shared',
  key,
  kind: 'question',
  signatures: [key],
  title: `about ${key}`,
  evidence: '{}',
  evidenceTo: '2026-11-08',
});
const open = { state: 'open', claimToken: null } as const;
const headline = (total: number): ReportHeadline => ({
  from: '2026-11-01',
  to: '2026-11-08',
  timeZone: 'UTC',
  totals: { human: total, ai: 0, total },
  previousTotals: { human: 1, ai: 0, total: 1 },
  partial: false,
  generatedAt: 1000 + total,
});

describeEachEngine('store: state per workspace', (db) => {
  it("a cached report of one workspace never answers another's, under the same key", async () => {
    await db.store.cacheReport(A, 'insights:k', '{"a":1}', 100, 0);
    expect(await db.store.cachedReport(B, 'insights:k', 10)).toBeUndefined();
    expect(await db.store.cachedReport(ONE, 'insights:k', 10)).toBeUndefined();
    // B's own under the same key lives beside A's; neither replaces the other.
    await db.store.cacheReport(B, 'insights:k', '{"b":1}', 100, 0);
    await db.store.cacheReport(ONE, 'insights:k', '{"one":1}', 100, 0);
    expect(await db.store.cachedReport(A, 'insights:k', 10)).toBe('{"a":1}');
    expect(await db.store.cachedReport(B, 'insights:k', 10)).toBe('{"b":1}');
    expect(await db.store.cachedReport(ONE, 'insights:k', 10)).toBe('{"one":1}');
  });

  it("keeps each workspace's last report headline", async () => {
    await db.store.putReportHeadline(A, headline(10));
    expect(await db.store.lastReportHeadline(B)).toBeUndefined();
    expect(await db.store.lastReportHeadline(ONE)).toBeUndefined();
    await db.store.putReportHeadline(B, headline(20));
    expect((await db.store.lastReportHeadline(A))?.totals.total).toBe(10);
    expect((await db.store.lastReportHeadline(B))?.totals.total).toBe(20);
  });

  it("keeps each workspace's chart points of one project apart, under the same range key", async () => {
    const key = 'proj_shared|2026-11-01|2026-11-02';
    await db.store.putVisitorPoint(A, key, { human: 3, ai: 1, total: 4 }, 100);
    expect(await db.store.getVisitorPoint(B, key)).toBeUndefined();
    expect(await db.store.getVisitorPoint(ONE, key)).toBeUndefined();
    // B's own and the single workspace's live beside A's; neither replaces another.
    await db.store.putVisitorPoint(B, key, { human: 7, ai: 2, total: 8 }, 200);
    await db.store.putVisitorPoint(ONE, key, { human: 1, ai: 0, total: 1 }, 300);
    await db.store.putVisitorPoint(A, key, { human: 5, ai: 1, total: 6 }, 400);
    expect(await db.store.getVisitorPoint(A, key)).toEqual({
      human: 5,
      ai: 1,
      total: 6,
      fetchedAt: 400,
    });
    expect(await db.store.getVisitorPoint(B, key)).toEqual({
      human: 7,
      ai: 2,
      total: 8,
      fetchedAt: 200,
    });
    expect(await db.store.getVisitorPoint(ONE, key)).toEqual({
      human: 1,
      ai: 0,
      total: 1,
      fetchedAt: 300,
    });
  });

  it("keeps each workspace's text vectors, of the same model and text", async () => {
    await db.store.putTextVectors(A, 'm', [{ hash: 'h', vector: 'AAAA' }], DAY, 0);
    expect(await db.store.textVectors(B, 'm', ['h'])).toEqual(new Map());
    expect(await db.store.textVectors(ONE, 'm', ['h'])).toEqual(new Map());
    await db.store.putTextVectors(B, 'm', [{ hash: 'h', vector: 'BBBB' }], DAY, 0);
    expect(await db.store.textVectors(A, 'm', ['h'])).toEqual(new Map([['h', 'AAAA']]));
    expect(await db.store.textVectors(B, 'm', ['h'])).toEqual(new Map([['h', 'BBBB']]));
  });

  it("a digest claimed, beating or posted in one workspace never blocks another's in the same channel", async () => {
    expect(await db.store.claimDigest(A, 'C1', '2026-W47', 'a', 1000, 600_000)).toEqual({
      state: 'claimed',
    });
    expect(await db.store.claimDigest(B, 'C1', '2026-W47', 'b', 1001, 600_000)).toEqual({
      state: 'claimed',
    });
    expect(await db.store.markDigestPosted(A, 'C1', '2026-W47', 'a', 2000)).toBe(true);
    // A's owner cannot beat on or mark B's claim; B's is still B's own and not posted.
    expect(await db.store.heartbeatDigest(A, 'C1', '2026-W47', 'b', 2001)).toBe(false);
    expect(await db.store.markDigestPosted(B, 'C1', '2026-W47', 'a', 2002)).toBe(false);
    expect(await db.store.claimDigest(B, 'C1', '2026-W47', 'c', 2003, 600_000)).toEqual({
      state: 'busy',
      owner: 'b',
    });
    expect(await db.store.claimDigest(ONE, 'C1', '2026-W47', 'd', 2004, 600_000)).toEqual({
      state: 'claimed',
    });
    expect(await db.store.claimDigest(A, 'C1', '2026-W47', 'e', 2005, 600_000)).toEqual({
      state: 'posted',
    });
  });

  it("gaps of one workspace are not another's: same project and key, ids of another refused", async () => {
    const [a] = await db.store.addGaps(A, [gap('api key rotat')], 1000);
    const [b] = await db.store.addGaps(B, [gap('api key rotat')], 1000);
    expect(b!.id).not.toBe(a!.id);
    expect(b!.key).toBe('api key rotat');
    expect((await db.store.gapsOf(A, 'proj_shared', 10)).map((g) => g.id)).toEqual([a!.id]);
    expect((await db.store.gapsOf(ONE, 'proj_shared', 10)).map((g) => g.id)).toEqual([]);
    // B holding A's id: no gap, nothing changes.
    expect(await db.store.gapWithThread(B, a!.id)).toBeUndefined();
    expect(await db.store.dismissGap(B, a!.id, open, 'U0B1', 2000)).toBe(false);
    const claim = { token: 'v1', userId: 'U0B1', before: '{}', now: 2000 };
    expect(await db.store.claimGap(B, a!.id, open, claim)).toBe(false);
    const seen = {
      id: a!.id,
      signatures: ['x'],
      title: 'B',
      evidence: '{}',
      evidenceTo: '2026-12-01',
    };
    await db.store.sawGaps(B, [seen], 3000);
    expect((await db.store.gapWithThread(A, a!.id))?.gap).toMatchObject({
      state: 'open',
      title: 'about api key rotat',
      lastSeenAt: 1000,
    });
    // A's own claim holds; B cannot release it.
    expect(await db.store.claimGap(A, a!.id, open, { ...claim, userId: 'U0A1' })).toBe(true);
    expect(await db.store.releaseGap(B, a!.id, 'v1')).toBe(false);
    const t = await db.store.createThread(
      { teamId: 'T0A', channelId: 'C', threadTs: '1.1', userId: 'U0A1', prompt: 'p', gapId: a!.id },
      2000,
    );
    expect([...(await db.store.gapThreads(A, [a!.id])).keys()]).toEqual([a!.id]);
    expect((await db.store.gapThreads(B, [a!.id])).size).toBe(0);
    expect((await db.store.gapWithThread(A, a!.id))?.thread?.id).toBe(t.id);
    expect((await db.store.gapWithThread(B, b!.id))?.gap.state).toBe('open');
  });
});
