import { expect, it } from 'vitest';
import { SINGLE_WORKSPACE as WS } from '../../src/store/scope.ts';
import { describeEachEngine } from '../helpers/store-engines.ts';
import { poll, snap, thread } from './fixtures.ts';

describeEachEngine('store: replica races', (db) => {
  it('lets one of two racing replicas claim a retry', async () => {
    const t = await db.store.createThread(thread, 0);
    await db.store.startFailed(t.id, 'rate limited', 1, 'safe');
    const other = await db.another();
    const wins = await Promise.all([db.store.claimRetry(t.id, 2), other.claimRetry(t.id, 2)]);
    expect(wins.filter(Boolean)).toHaveLength(1);
  });

  it('never hands out more budget than the limit when replicas race for the last slots', async () => {
    const b = await db.another();
    const hour = 3_600_000;
    const tries = Array.from({ length: 40 }, (_, i) =>
      (i % 2 ? b : db.store).takeBudgetSlot('agent:p', 1_000 + i, hour, 25),
    );
    const results = await Promise.all(tries);
    expect(results.filter((r) => r.ok)).toHaveLength(25);
    expect(results.filter((r) => !r.ok)).toHaveLength(15);
  });

  it('leases each due job to one of two racing replicas', async () => {
    const b = await db.another();
    for (let i = 0; i < 30; i++) {
      const t = await db.store.createThread({ ...thread, threadTs: `5.${i}` }, 0);
      await db.store.attachJob(
        t.id,
        snap({ jobId: `j${i}` }),
        { nextPollAt: i, pollIntervalMs: 1 },
        0,
      );
    }
    const claims = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        (i % 2 ? b : db.store).claimDueJobs(100, 4, { owner: `r${i % 2}`, until: 1_000 }),
      ),
    );
    const ids = claims.flat().map((t) => t.jobId);
    expect(ids).toHaveLength(30);
    expect(new Set(ids).size).toBe(30);
  });

  it('leases each root update to one of two racing replicas', async () => {
    const b = await db.another();
    const threads = [];
    for (let i = 0; i < 20; i++) {
      const t = await db.store.createThread({ ...thread, threadTs: `6.${i}` }, 0);
      threads.push(
        await db.store.attachJob(
          t.id,
          snap({ jobId: `j${i}` }),
          { nextPollAt: null, pollIntervalMs: 1 },
          0,
        ),
      );
    }
    // Both replicas queued every root; each tries every one when its turn comes.
    const claims = await Promise.all(
      threads.flatMap((t) =>
        [db.store, b].map((s, r) => s.claimRootUpdate(t.id, 10, { owner: `r${r}`, until: 1_000 })),
      ),
    );
    const won = claims.filter((c) => c !== undefined).map((c) => c.id);
    expect(won.sort((x, y) => x - y)).toEqual(threads.map((t) => t.id));
  });

  it('records overlapping batches from two replicas without deadlocking', async () => {
    const b = await db.another();
    const ids: number[] = [];
    for (let i = 0; i < 20; i++) {
      const t = await db.store.createThread({ ...thread, threadTs: `6.${i}` }, 0);
      await db.store.attachJob(
        t.id,
        snap({ jobId: `j${i}` }),
        { nextPollAt: 1, pollIntervalMs: 1 },
        0,
      );
      ids.push(t.id);
    }
    const batch = (order: number[], at: number) =>
      order.map((threadId) =>
        poll({ threadId, snapshot: snap({ jobId: `j${ids.indexOf(threadId)}` }), now: at }),
      );
    // Opposite orders: without a fixed lock order these would deadlock on PostgreSQL.
    const results = await Promise.all(
      Array.from({ length: 6 }, (_, i) =>
        (i % 2 ? b : db.store).recordPolls(batch(i % 2 ? [...ids].reverse() : ids, 10 + i)),
      ),
    );
    expect(results.flat().every(Boolean)).toBe(true);
  });

  it('lets one of two racing replicas claim a Slack event', async () => {
    const b = await db.another();
    const results = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        (i % 2 ? b : db.store).claimEvent(['event:E1', 'msg:C:1'], i),
      ),
    );
    expect(results.filter(Boolean)).toHaveLength(1);
  });

  it('lets one of two racing replicas claim a digest period', async () => {
    const b = await db.another();
    const results = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        (i % 2 ? b : db.store).claimDigest(WS, 'C1', 'W9', `r${i}`, 1_000, 600_000),
      ),
    );
    expect(results.filter((r) => r.state === 'claimed')).toHaveLength(1);
  });
});
