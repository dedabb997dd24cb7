import { expect, it } from 'vitest';
import { describeEachEngine } from '../helpers/store-engines.ts';
import { poll, snap, thread } from './fixtures.ts';

describeEachEngine('store: follow-ups', (db) => {
  it('ignores a poll answer from before a follow-up started a new round', async () => {
    const t = await db.store.createThread(thread, 0);
    await db.store.attachJob(t.id, snap(), { nextPollAt: 5, pollIntervalMs: 5 }, 0);
    await db.store.claimDueJobs(5, 1, { owner: 'r1', until: 1_000 });
    await db.store.startRound(t.id, snap(), { nextPollAt: 50, pollIntervalMs: 5 }, 10, true);
    const stale = { key: 'job_1:0:completed', kind: 'completed' as const, prLink: null };
    expect(
      await db.store.recordPoll(
        poll({
          threadId: t.id,
          snapshot: snap({ status: 'completed' }),
          announcements: [stale],
          now: 11,
          owner: 'r1',
        }),
      ),
    ).toBe(false);
    expect(await db.store.getThread(t.id)).toMatchObject({
      round: 1,
      status: 'active',
      nextPollAt: 50,
      followUpAt: 10,
    });
    expect(await db.store.pendingAnnouncements(100, 10)).toEqual([]);
    // The stale poll gave its lease back: the new round is polled when due, not later.
    expect(await db.store.claimDueJobs(50, 1, { owner: 'r2', until: 1_000 })).toHaveLength(1);
    expect(
      await db.store.recordPoll(
        poll({
          threadId: t.id,
          round: 1,
          snapshot: snap(),
          schedule: { nextPollAt: 60, pollIntervalMs: 5 },
          now: 12,
        }),
      ),
    ).toBe(true);
    expect((await db.store.getThread(t.id))?.followUpAt).toBeNull(); // seen active again
  });

  it('records a reply once, by its event or its own key, and moves it through its states', async () => {
    const t = await db.store.createThread(thread, 0);
    const reply = {
      threadId: t.id,
      replyKey: 'C1:7.1',
      replyTs: '7.1',
      userId: 'U2',
      text: 'More',
    };
    const f = await db.store.recordFollowUp(reply, ['event:Ev7'], 10);
    expect(f).toMatchObject({ state: 'received', text: 'More', createdAt: 10 });
    expect(await db.store.recordFollowUp(reply, ['event:Ev7'], 11)).toBeUndefined();
    expect(await db.store.recordFollowUp(reply, ['event:Ev8'], 12)).toBeUndefined(); // same message
    expect(await db.store.staleFollowUps('received', 11, 10)).toHaveLength(1);
    expect(await db.store.staleFollowUps('received', 10, 10)).toEqual([]);
    expect(await db.store.moveFollowUp(f!.id, ['received'], 'sending', 20)).toBe(true);
    expect(await db.store.moveFollowUp(f!.id, ['received'], 'sending', 21)).toBe(false); // taken
    const [sending] = await db.store.staleFollowUps('sending', 30, 10);
    const notice = {
      key: 'reply:C1:7.1:uncertain',
      kind: 'notice' as const,
      prLink: null,
      detail: 'Maybe',
    };
    expect(await db.store.followUpUncertain(sending!, notice, 40)).toBe(true);
    expect(await db.store.followUpUncertain(sending!, notice, 41)).toBe(false); // told once
    const pending = await db.store.pendingAnnouncements(100, 10);
    expect(pending.map((p) => p.announcement)).toEqual([notice]);
    await db.store.pruneEvents(1_000);
    expect(await db.store.recordFollowUp(reply, [], 1_001)).toMatchObject({ state: 'received' });
  });
});
