import { expect, it } from 'vitest';
import type { Store } from '../../src/store/types.ts';
import { describeEachEngine } from '../helpers/store-engines.ts';
import { poll, snap, thread } from './fixtures.ts';

describeEachEngine('store: outbox', (db) => {
  it('puts each announcement key in the outbox once, and fences marks by attempt', async () => {
    const t = await db.store.createThread(thread, 0);
    const a = { key: 'job_1:0:completed', kind: 'completed' as const, prLink: 'https://x/pr/1' };
    const done = snap({ status: 'completed' });
    await db.store.recordPoll(
      poll({ threadId: t.id, snapshot: done, announcements: [a], now: 10 }),
    );
    await db.store.recordPoll(
      poll({ threadId: t.id, snapshot: done, announcements: [a], now: 11 }),
    );
    const pending = await db.store.pendingAnnouncements(20, 10);
    expect(pending).toHaveLength(1);
    expect(pending[0]).toMatchObject({ threadId: t.id, attempts: 0, announcement: a });
    const id = pending[0]!.id;
    expect(await db.store.markAnnouncementAttempt(id, 0, 80)).toBe(true);
    expect(await db.store.markAnnouncementAttempt(id, 0, 80)).toBe(false); // someone else's now
    expect(await db.store.pendingAnnouncements(50, 10)).toEqual([]); // leased while being posted
    expect(await db.store.pendingAnnouncements(80, 10)).toHaveLength(1); // the poster died: due again
    expect(await db.store.markAnnouncementRetry(id, 1, 100, 'ratelimited')).toBe(true);
    expect(await db.store.pendingAnnouncements(50, 10)).toEqual([]);
    expect((await db.store.pendingAnnouncements(100, 10))[0]?.attempts).toBe(1);
    // Another replica takes attempt 2; the first one's late marks for attempt 1 are refused.
    expect(await db.store.markAnnouncementAttempt(id, 1, 200)).toBe(true);
    expect(await db.store.markAnnouncementRetry(id, 1, 100, 'late')).toBe(false);
    expect(await db.store.markAnnouncementSent(id, 1, 150)).toBe(false);
    expect(await db.store.markAnnouncementSent(id, 2, 160)).toBe(true);
    expect(await db.store.pendingAnnouncements(1000, 10)).toEqual([]);
    expect(await db.store.markAnnouncementAttempt(id, 2, 2_000)).toBe(false); // sent stays sent
  });

  it('leaves out of the pending announcements the ids, channels and kinds asked', async () => {
    const inChannel = async (channelId: string, ts: string, kind: 'completed' | 'notice') => {
      const t = await db.store.createThread({ ...thread, channelId, threadTs: ts }, 0);
      const a = { key: `k${ts}`, kind, prLink: null, detail: kind === 'notice' ? 'hi' : null };
      await db.store.recordPoll(poll({ threadId: t.id, announcements: [a], now: 1 }));
      return (await db.store.pendingAnnouncements(1, 100)).find(
        (i) => i.announcement.key === a.key,
      )!;
    };
    const a1 = await inChannel('CA', '1.1', 'completed');
    const a2 = await inChannel('CA', '1.2', 'completed');
    const b1 = await inChannel('CB', '2.1', 'completed');
    const n1 = await inChannel('CA', '1.3', 'notice');
    const ids = async (filter?: Parameters<Store['pendingAnnouncements']>[2], limit = 10) =>
      (await db.store.pendingAnnouncements(5, limit, filter)).map((i) => i.id);
    expect(await db.store.pendingAnnouncements(5, 1)).toEqual([
      expect.objectContaining({ id: a1.id, channelId: 'CA', threadId: a1.threadId }),
    ]);
    expect(await ids()).toEqual([a1.id, a2.id, b1.id, n1.id]);
    expect(await ids({ skipIds: [a1.id, b1.id] })).toEqual([a2.id, n1.id]);
    expect(await ids({ skipChannels: ['CA'] })).toEqual([b1.id]);
    expect(await ids({ kinds: ['notice'] })).toEqual([n1.id]);
    expect(await ids({ kinds: [] })).toEqual([]);
    expect(await ids({ skipIds: [a1.id], skipChannels: ['CB'] }, 1)).toEqual([a2.id]);
  });
});
