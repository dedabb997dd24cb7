import { expect, it } from 'vitest';
import type { PollRecord } from '../../src/store/types.ts';
import { describeEachEngine } from '../helpers/store-engines.ts';
import { poll, snap, thread } from './fixtures.ts';

describeEachEngine('store: poll batches written set-wise', (db) => {
  it('writes a large mixed batch: lost leases write nothing, the rest their rows and outbox items in order', async () => {
    // Over 500 rows and 500 outbox items: more than one statement's worth on either.
    const n = 520;
    const ids: number[] = [];
    for (let i = 0; i < n; i++) {
      const t = await db.store.createThread({ ...thread, threadTs: `9.${i}` }, 0);
      const lost = i % 4 === 0;
      await db.store.attachJob(
        t.id,
        snap({ jobId: `b${i}` }),
        { nextPollAt: lost ? 5 : 10, pollIntervalMs: 10 },
        0,
      );
      ids.push(t.id);
    }
    const lost = (i: number) => i % 4 === 0;
    await db.store.claimDueJobs(5, n, { owner: 'r1', until: 100 });
    await db.store.claimDueJobs(10, n, { owner: 'r1', until: 1_000 });
    // r1 stalls on every fourth job; r2 takes those over once their leases run out.
    expect(await db.store.claimDueJobs(100, n, { owner: 'r2', until: 500 })).toHaveLength(n / 4);
    const batch: PollRecord[] = ids.map((id, i) =>
      poll({
        threadId: id,
        snapshot: snap({ jobId: `b${i}`, status: 'completed', prLink: `https://x/pr/${i}` }),
        announcements: [
          { key: `b${i}:0:completed`, kind: 'completed', prLink: `https://x/pr/${i}` },
          { key: `b${i}:0:note`, kind: 'failed', prLink: null, detail: `d${i}` },
        ],
        now: 120,
        owner: 'r1',
      }),
    );
    expect(await db.store.recordPolls(batch)).toEqual(ids.map((_, i) => !lost(i)));
    for (const [i, id] of ids.entries())
      expect(await db.store.getThread(id)).toMatchObject(
        lost(i)
          ? { status: 'active', prLink: null, nextPollAt: 5, rootVersion: 2, changedAt: 0 }
          : { status: 'completed', prLink: `https://x/pr/${i}`, nextPollAt: null, rootVersion: 3 },
      );
    const queued = await db.store.pendingAnnouncements(1_000, 2 * n);
    const kept = ids.flatMap((id, i) => (lost(i) ? [] : [[id, i] as const]));
    expect(queued.map((q) => [q.threadId, q.teamId, q.announcement.key, q.createdAt])).toEqual(
      kept.flatMap(([id, i]) => [
        [id, 'T1', `b${i}:0:completed`, 120],
        [id, 'T1', `b${i}:0:note`, 120],
      ]),
    );
    expect(queued[1]?.announcement).toEqual({
      key: 'b1:0:note',
      kind: 'failed',
      prLink: null,
      detail: 'd1',
    });
    // r2 still holds the ones it took over; r1's other leases were all given back.
    expect(await db.store.claimDueJobs(200, n, { owner: 'r3', until: 900 })).toEqual([]);
  });

  it('meets a thread recorded twice in one batch (no lease) as the first item left it', async () => {
    const t = await db.store.createThread(thread, 0);
    await db.store.attachJob(t.id, snap(), { nextPollAt: 10, pollIntervalMs: 10 }, 0);
    const pr = snap({ prLink: 'https://x/pr/7' });
    const opened = { key: 'job_1:0:pr', kind: 'completed' as const, prLink: 'https://x/pr/7' };
    const results = await db.store.recordPolls([
      poll({
        threadId: t.id,
        snapshot: pr,
        schedule: { nextPollAt: 20, pollIntervalMs: 10 },
        announcements: [opened],
        now: 10,
      }),
      // Sees the PR link already there: no new root version, no new change time; its
      // repeat of the first's announcement is queued once.
      poll({
        threadId: t.id,
        snapshot: pr,
        schedule: { nextPollAt: 40, pollIntervalMs: 20 },
        announcements: [
          { ...opened, detail: 'second' },
          { key: 'job_1:0:more', kind: 'failed', prLink: null },
        ],
        now: 30,
        failingSince: 25,
      }),
    ]);
    expect(results).toEqual([true, true]);
    expect(await db.store.getThread(t.id)).toMatchObject({
      prLink: 'https://x/pr/7',
      rootVersion: 3,
      changedAt: 10,
      nextPollAt: 40,
      pollIntervalMs: 20,
      pollFailingSince: 25,
    });
    const queued = await db.store.pendingAnnouncements(1_000, 10);
    expect(queued.map((q) => [q.announcement.key, q.announcement.detail, q.createdAt])).toEqual([
      ['job_1:0:pr', null, 10],
      ['job_1:0:more', null, 30],
    ]);
  });
});
