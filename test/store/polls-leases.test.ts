import { expect, it } from 'vitest';
import { describeEachEngine } from '../helpers/store-engines.ts';
import { poll, snap, thread } from './fixtures.ts';

describeEachEngine('store: polls and leases', (db) => {
  it('leases due jobs soonest first to one owner, and stops returning unwatched ones', async () => {
    const a = await db.store.createThread({ ...thread, threadTs: '1.1' }, 0);
    const b = await db.store.createThread({ ...thread, threadTs: '1.2' }, 0);
    await db.store.attachJob(
      a.id,
      snap({ jobId: 'a' }),
      { nextPollAt: 300, pollIntervalMs: 100 },
      0,
    );
    await db.store.attachJob(
      b.id,
      snap({ jobId: 'b' }),
      { nextPollAt: 200, pollIntervalMs: 100 },
      0,
    );
    expect(await db.store.nextDueAt()).toBe(200);
    const mine = { owner: 'r1', until: 1_000 };
    expect((await db.store.claimDueJobs(250, 10, mine)).map((t) => t.jobId)).toEqual(['b']);
    // b is leased: not due again for anyone, and the sleep runs to the lease's end.
    expect((await db.store.claimDueJobs(400, 10, mine)).map((t) => t.jobId)).toEqual(['a']);
    expect(await db.store.claimDueJobs(400, 10, { owner: 'r2', until: 2_000 })).toEqual([]);
    expect(await db.store.nextDueAt()).toBe(1_000);
    expect(
      await db.store.recordPoll(
        poll({ threadId: b.id, snapshot: snap({ jobId: 'b', status: 'completed' }), owner: 'r1' }),
      ),
    ).toBe(true);
    expect(
      await db.store.recordPoll(
        poll({
          threadId: a.id,
          snapshot: snap({ jobId: 'a' }),
          schedule: { nextPollAt: 500, pollIntervalMs: 100 },
          owner: 'r1',
        }),
      ),
    ).toBe(true);
    // Recording released the leases; b is finished and no longer watched.
    expect(await db.store.nextDueAt()).toBe(500);
    expect((await db.store.claimDueJobs(600, 10, mine)).map((t) => t.jobId)).toEqual(['a']);
  });

  it("takes a dead owner's lease over once it expires, and refuses the old owner's late answer", async () => {
    const t = await db.store.createThread(thread, 0);
    await db.store.attachJob(t.id, snap(), { nextPollAt: 10, pollIntervalMs: 10 }, 0);
    expect(await db.store.claimDueJobs(10, 5, { owner: 'dead', until: 100 })).toHaveLength(1);
    expect(await db.store.claimDueJobs(99, 5, { owner: 'alive', until: 200 })).toEqual([]);
    expect(await db.store.claimDueJobs(100, 5, { owner: 'alive', until: 200 })).toHaveLength(1);
    const late = poll({
      threadId: t.id,
      snapshot: snap({ status: 'failed' }),
      announcements: [{ key: 'job_1:0:failed', kind: 'failed', prLink: null }],
      owner: 'dead',
    });
    expect(await db.store.recordPoll(late)).toBe(false);
    expect(await db.store.pendingAnnouncements(1_000, 10)).toEqual([]);
    expect(await db.store.getThread(t.id)).toMatchObject({ status: 'active' });
    expect(
      await db.store.recordPoll(poll({ threadId: t.id, snapshot: snap(), owner: 'alive' })),
    ).toBe(true);
    // Even after the new owner recorded and released, the old one stays refused.
    expect(await db.store.recordPoll(late)).toBe(false);
  });

  it('records a batch of polls in one go, fencing each item on its own', async () => {
    const ids: number[] = [];
    for (const [i, name] of ['ok', 'taken', 'followed', 'failing'].entries()) {
      const t = await db.store.createThread({ ...thread, threadTs: `3.${i}` }, 0);
      const due = name === 'taken' ? 5 : 10;
      await db.store.attachJob(
        t.id,
        snap({ jobId: name }),
        { nextPollAt: due, pollIntervalMs: 10 },
        0,
      );
      ids.push(t.id);
    }
    const [ok, taken, followed, failing] = ids as [number, number, number, number];
    expect(await db.store.claimDueJobs(5, 10, { owner: 'r1', until: 100 })).toHaveLength(1);
    expect(await db.store.claimDueJobs(10, 10, { owner: 'r1', until: 1_000 })).toHaveLength(3);
    // r1 stalls: its lease on `taken` runs out and r2 takes the job over; a follow-up
    // starts round 1 of `followed` meanwhile.
    expect(await db.store.claimDueJobs(100, 10, { owner: 'r2', until: 500 })).toHaveLength(1);
    await db.store.startRound(
      followed,
      snap({ jobId: 'followed' }),
      { nextPollAt: 400, pollIntervalMs: 10 },
      90,
      true,
    );
    const done = { key: 'ok:0:completed', kind: 'completed' as const, prLink: 'https://x/pr/1' };
    const results = await db.store.recordPolls([
      poll({
        threadId: ok,
        snapshot: snap({ jobId: 'ok', status: 'completed', prLink: 'https://x/pr/1' }),
        announcements: [done],
        now: 120,
        owner: 'r1',
      }),
      poll({
        threadId: taken,
        snapshot: snap({ jobId: 'taken', status: 'failed' }),
        announcements: [{ key: 'taken:0:failed', kind: 'failed', prLink: null }],
        now: 120,
        owner: 'r1',
      }),
      poll({
        threadId: followed,
        snapshot: snap({ jobId: 'followed', status: 'completed' }),
        owner: 'r1',
      }),
      poll({
        threadId: failing,
        schedule: { nextPollAt: 700, pollIntervalMs: 60 },
        failingSince: 110,
        now: 120,
        owner: 'r1',
      }),
      poll({ threadId: 999_999, owner: 'r1' }), // no such thread
    ]);
    expect(results).toEqual([true, false, false, true, false]);
    expect(await db.store.getThread(ok)).toMatchObject({
      status: 'completed',
      nextPollAt: null,
      changedAt: 120,
      rootVersion: 3,
    });
    // The refused items changed nothing: r2 still holds `taken`, `followed` keeps its round.
    expect(await db.store.getThread(taken)).toMatchObject({ status: 'active', nextPollAt: 5 });
    expect(await db.store.claimDueJobs(100, 10, { owner: 'r3', until: 600 })).toEqual([]);
    expect(await db.store.getThread(followed)).toMatchObject({
      round: 1,
      status: 'active',
      nextPollAt: 400,
    });
    expect(await db.store.getThread(failing)).toMatchObject({
      nextPollAt: 700,
      pollFailingSince: 110,
      changedAt: 0,
      rootVersion: 2,
    });
    expect((await db.store.pendingAnnouncements(1_000, 10)).map((p) => p.announcement)).toEqual([
      { ...done, detail: null },
    ]);
    // Every lease r1 held was given back: `followed` is due for its new round, to anyone.
    expect(
      (await db.store.claimDueJobs(400, 10, { owner: 'r3', until: 900 })).map((t) => t.id),
    ).toEqual([followed]);
    expect(await db.store.recordPolls([])).toEqual([]);
  });

  it('records one thread twice in a batch as two polls in a row would', async () => {
    const t = await db.store.createThread(thread, 0);
    await db.store.attachJob(t.id, snap(), { nextPollAt: 10, pollIntervalMs: 10 }, 0);
    await db.store.claimDueJobs(10, 1, { owner: 'r1', until: 100 });
    const first = poll({
      threadId: t.id,
      snapshot: snap(),
      schedule: { nextPollAt: 20, pollIntervalMs: 10 },
      owner: 'r1',
    });
    // The first released the lease, so the second (same owner) is refused, as it would be alone.
    expect(
      await db.store.recordPolls([
        first,
        { ...first, schedule: { nextPollAt: 90, pollIntervalMs: 10 } },
      ]),
    ).toEqual([true, false]);
    expect((await db.store.getThread(t.id))?.nextPollAt).toBe(20);
  });

  it('gives back the leases an owner holds when it stops', async () => {
    const t = await db.store.createThread(thread, 0);
    await db.store.attachJob(t.id, snap(), { nextPollAt: 10, pollIntervalMs: 10 }, 0);
    await db.store.claimDueJobs(10, 5, { owner: 'r1', until: 10_000 });
    await db.store.claimRootUpdate(t.id, 10, { owner: 'r1', until: 10_000 });
    await db.store.releaseLeases('r2');
    expect(await db.store.claimDueJobs(20, 5, { owner: 'r2', until: 10_000 })).toEqual([]);
    await db.store.releaseLeases('r1');
    expect(await db.store.claimDueJobs(20, 5, { owner: 'r2', until: 10_000 })).toHaveLength(1);
    expect(await db.store.claimRootUpdate(t.id, 20, { owner: 'r2', until: 10_000 })).toBeDefined();
  });

  it('bumps the root version only when what the root shows changed', async () => {
    const t = await db.store.createThread(thread, 0);
    const attached = await db.store.attachJob(
      t.id,
      snap(),
      { nextPollAt: 1, pollIntervalMs: 1 },
      0,
    );
    expect(attached.rootVersion).toBe(2);
    await db.store.recordPoll(
      poll({ threadId: t.id, snapshot: snap(), schedule: { nextPollAt: 2, pollIntervalMs: 2 } }),
    );
    expect((await db.store.getThread(t.id))?.rootVersion).toBe(2);
    await db.store.recordPoll(
      poll({ threadId: t.id, snapshot: snap({ status: 'completed', prLink: 'https://x/pr/1' }) }),
    );
    expect((await db.store.getThread(t.id))?.rootVersion).toBe(3);
  });

  it('leases each root update to one owner, coalesces, and never moves the shown version back', async () => {
    const t = await db.store.createThread(thread, 0); // version 1, shown 1
    await db.store.attachJob(t.id, snap(), { nextPollAt: 1, pollIntervalMs: 1 }, 0); // 2
    await db.store.recordPoll(poll({ threadId: t.id, snapshot: snap({ status: 'completed' }) })); // 3
    const claim = (now: number, owner: string, until: number) =>
      db.store.claimRootUpdate(t.id, now, { owner, until });
    expect(await db.store.pendingRootUpdates(10, 10)).toMatchObject([{ id: t.id }]);
    const claimed = await claim(10, 'r1', 100);
    expect(claimed).toMatchObject({ id: t.id, rootVersion: 3, rootShownVersion: 1 });
    expect(await db.store.pendingRootUpdates(10, 10)).toEqual([]); // leased: not pending
    expect(await claim(10, 'r2', 100)).toBeUndefined();
    // Slack said "later": the lease is kept until then.
    await db.store.deferRootUpdate(t.id, 'r1', 500);
    expect(await claim(200, 'r2', 900)).toBeUndefined();
    expect(await db.store.pendingRootUpdates(500, 10)).toHaveLength(1);
    expect(await claim(500, 'r2', 900)).toBeDefined();
    await db.store.markRootShown(t.id, 3, 'r2');
    expect(await db.store.pendingRootUpdates(600, 10)).toEqual([]);
    expect(await claim(600, 'r2', 900)).toBeUndefined(); // shown: nothing to claim
    await db.store.markRootShown(t.id, 2, 'r1'); // a late, older update never moves it back
    expect((await db.store.getThread(t.id))?.rootShownVersion).toBe(3);
  });

  it('lists pending root updates unleased, never-edited roots first, leaving out the ones asked', async () => {
    const shown = async (ts: string) => {
      const t = await db.store.createThread({ ...thread, threadTs: ts }, 0);
      await db.store.attachJob(
        t.id,
        snap({ jobId: `j${ts}` }),
        { nextPollAt: null, pollIntervalMs: 1 },
        0,
      );
      await db.store.claimRootUpdate(t.id, 0, { owner: 'r0', until: 1 });
      await db.store.markRootShown(t.id, 2, 'r0');
      await db.store.recordPoll(
        poll({ threadId: t.id, snapshot: snap({ jobId: `j${ts}`, status: 'completed' }), now: 5 }),
      );
      return t;
    };
    const a = await shown('1.1'); // shown before, changed since
    const b = await shown('1.2');
    const refused = await db.store.createThread({ ...thread, threadTs: '1.3' }, 0);
    await db.store.startFailed(refused.id, 'budget spent', 10); // its first edit since posted
    const started = await db.store.createThread({ ...thread, threadTs: '1.4' }, 0);
    await db.store.attachJob(
      started.id,
      snap({ jobId: 'j1.4' }),
      { nextPollAt: null, pollIntervalMs: 1 },
      20,
    );
    const ids = async (skip?: number[], limit = 10) =>
      (await db.store.pendingRootUpdates(100, limit, skip)).map((t) => t.id);
    expect(await ids()).toEqual([refused.id, started.id, a.id, b.id]);
    expect(await ids(undefined, 1)).toEqual([refused.id]);
    expect(await ids([refused.id, a.id])).toEqual([started.id, b.id]);
    await db.store.claimRootUpdate(b.id, 100, { owner: 'r1', until: 200 });
    expect(await ids()).toEqual([refused.id, started.id, a.id]);
  });

  it('says when the next poll falls due from the index, leases included, at scale', async () => {
    expect(await db.store.nextDueAt()).toBeNull();
    for (let i = 0; i < 50; i++) {
      const t = await db.store.createThread({ ...thread, threadTs: `7.${i}` }, 0);
      await db.store.attachJob(
        t.id,
        snap({ jobId: `n${i}` }),
        { nextPollAt: 1_000 + i, pollIntervalMs: 1 },
        0,
      );
    }
    expect(await db.store.nextDueAt()).toBe(1_000);
    // The three soonest are leased until 1_020: the soonest free one is 1_003, the lease later.
    await db.store.claimDueJobs(1_002, 3, { owner: 'r1', until: 1_020 });
    expect(await db.store.nextDueAt()).toBe(1_003);
    await db.store.claimDueJobs(1_049, 47, { owner: 'r1', until: 1_020 });
    expect(await db.store.nextDueAt()).toBe(1_020);
  });
});
