import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openSqliteStore } from '../../src/store/sqlite.ts';
import type { JobSnapshot, Store } from '../../src/store/types.ts';

/**
 * One suite for every engine: a Postgres engine must pass exactly these tests.
 * Each test gets a fresh store on a real file.
 */
const engines: [string, (dir: string) => Promise<Store>][] = [
  ['sqlite', (dir) => openSqliteStore(join(dir, 'nested', 'bot.sqlite'))],
];

const thread = {
  teamId: 'T1',
  channelId: 'C1',
  threadTs: '100.1',
  userId: 'U1',
  prompt: 'Add a quickstart',
};
const snap = (over: Partial<JobSnapshot> = {}): JobSnapshot => ({
  jobId: 'job_1',
  status: 'active',
  model: 'm',
  repository: 'https://github.com/acme/docs',
  ref: 'main',
  prLink: null,
  ...over,
});

describe.each(engines)('store (%s)', (_name, open) => {
  let dir: string;
  let store: Store;
  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'store-'));
    store = await open(dir);
  });
  afterEach(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('keeps the thread ↔ job mapping across a reopen', async () => {
    const t = await store.createThread(thread, 1000);
    await store.attachJob(t.id, snap(), { nextPollAt: 6000, pollIntervalMs: 5000 }, 1001);
    await store.close();
    store = await open(dir);
    const found = await store.findThread('T1', 'C1', '100.1');
    expect(found).toMatchObject({
      jobId: 'job_1',
      status: 'active',
      nextPollAt: 6000,
      prompt: 'Add a quickstart',
    });
    expect(await store.findThread('T1', 'C1', '999.9')).toBeUndefined();
  });

  it('refuses a second thread with the same (team, channel, ts)', async () => {
    await store.createThread(thread, 1);
    await expect(store.createThread(thread, 2)).rejects.toThrow();
  });

  it('returns due jobs soonest first and stops returning unwatched ones', async () => {
    const a = await store.createThread({ ...thread, threadTs: '1.1' }, 0);
    const b = await store.createThread({ ...thread, threadTs: '1.2' }, 0);
    await store.attachJob(a.id, snap({ jobId: 'a' }), { nextPollAt: 300, pollIntervalMs: 100 }, 0);
    await store.attachJob(b.id, snap({ jobId: 'b' }), { nextPollAt: 200, pollIntervalMs: 100 }, 0);
    expect((await store.dueJobs(250, 10)).map((t) => t.jobId)).toEqual(['b']);
    expect((await store.dueJobs(400, 10)).map((t) => t.jobId)).toEqual(['b', 'a']);
    expect(await store.nextDueAt()).toBe(200);
    await store.recordPoll(
      b.id,
      0,
      snap({ jobId: 'b', status: 'completed' }),
      { nextPollAt: null, pollIntervalMs: 100 },
      [],
      1,
    );
    expect((await store.dueJobs(400, 10)).map((t) => t.jobId)).toEqual(['a']);
  });

  it('bumps the root version only when what the root shows changed', async () => {
    const t = await store.createThread(thread, 0);
    const attached = await store.attachJob(t.id, snap(), { nextPollAt: 1, pollIntervalMs: 1 }, 0);
    expect(attached.rootVersion).toBe(2);
    await store.recordPoll(t.id, 0, snap(), { nextPollAt: 2, pollIntervalMs: 2 }, [], 0);
    expect((await store.getThread(t.id))?.rootVersion).toBe(2);
    await store.recordPoll(
      t.id,
      0,
      snap({ status: 'completed', prLink: 'https://x/pr/1' }),
      { nextPollAt: null, pollIntervalMs: 2 },
      [],
      0,
    );
    const after = await store.getThread(t.id);
    expect(after?.rootVersion).toBe(3);
    expect((await store.threadsNeedingRootUpdate(10)).map((x) => x.id)).toEqual([t.id]);
    await store.markRootShown(t.id, 3);
    expect(await store.threadsNeedingRootUpdate(10)).toEqual([]);
    await store.markRootShown(t.id, 2); // a late, older update never moves it back
    expect((await store.getThread(t.id))?.rootShownVersion).toBe(3);
  });

  it('ignores a poll answer from before a follow-up started a new round', async () => {
    const t = await store.createThread(thread, 0);
    await store.attachJob(t.id, snap(), { nextPollAt: 5, pollIntervalMs: 5 }, 0);
    await store.recordFollowUp(t.id, snap(), { nextPollAt: 50, pollIntervalMs: 5 }, 10, true);
    const stale = { key: 'job_1:0:completed', kind: 'completed' as const, prLink: null };
    expect(
      await store.recordPoll(
        t.id,
        0,
        snap({ status: 'completed' }),
        { nextPollAt: null, pollIntervalMs: 5 },
        [stale],
        11,
      ),
    ).toBe(false);
    expect(await store.getThread(t.id)).toMatchObject({
      round: 1,
      status: 'active',
      nextPollAt: 50,
      followUpAt: 10,
    });
    expect(await store.pendingAnnouncements(100, 10)).toEqual([]);
    expect(
      await store.recordPoll(t.id, 1, snap(), { nextPollAt: 60, pollIntervalMs: 5 }, [], 12),
    ).toBe(true);
    expect((await store.getThread(t.id))?.followUpAt).toBeNull(); // seen active again
  });

  it('puts each announcement key in the outbox once', async () => {
    const t = await store.createThread(thread, 0);
    const a = { key: 'job_1:0:completed', kind: 'completed' as const, prLink: 'https://x/pr/1' };
    await store.recordPoll(
      t.id,
      0,
      snap({ status: 'completed' }),
      { nextPollAt: null, pollIntervalMs: 1 },
      [a],
      10,
    );
    await store.recordPoll(
      t.id,
      0,
      snap({ status: 'completed' }),
      { nextPollAt: null, pollIntervalMs: 1 },
      [a],
      11,
    );
    const pending = await store.pendingAnnouncements(20, 10);
    expect(pending).toHaveLength(1);
    expect(pending[0]).toMatchObject({ threadId: t.id, attempts: 0, announcement: a });
    expect(await store.markAnnouncementAttempt(pending[0]!.id, 0, 80)).toBe(true);
    expect(await store.markAnnouncementAttempt(pending[0]!.id, 0, 80)).toBe(false); // someone else's now
    expect(await store.pendingAnnouncements(50, 10)).toEqual([]); // leased while being posted
    expect(await store.pendingAnnouncements(80, 10)).toHaveLength(1); // the poster died: due again
    await store.markAnnouncementRetry(pending[0]!.id, 100, 'ratelimited');
    expect(await store.pendingAnnouncements(50, 10)).toEqual([]);
    expect((await store.pendingAnnouncements(100, 10))[0]?.attempts).toBe(1);
    await store.markAnnouncementSent(pending[0]!.id, 101);
    expect(await store.pendingAnnouncements(1000, 10)).toEqual([]);
  });

  it('claims an event once, by any of its keys', async () => {
    expect(await store.claimEvent(['event:Ev1', 'msg:C1:1.1'], 0)).toBe(true);
    expect(await store.claimEvent(['event:Ev1', 'msg:C1:1.1'], 1)).toBe(false);
    expect(await store.claimEvent(['event:Ev2', 'msg:C1:1.1'], 2)).toBe(false);
    await store.pruneEvents(10);
    expect(await store.claimEvent(['event:Ev1'], 11)).toBe(true);
  });

  it('keeps a sliding one-hour budget and says when the next slot opens', async () => {
    const hour = 3_600_000;
    for (let i = 0; i < 3; i++)
      expect((await store.takeBudgetSlot('agent:p', 1000 + i, hour, 3)).ok).toBe(true);
    expect(await store.takeBudgetSlot('agent:p', 2000, hour, 3)).toEqual({
      ok: false,
      retryAtMs: 1000 + hour,
    });
    expect((await store.takeBudgetSlot('analytics:o', 2000, hour, 3)).ok).toBe(true);
    expect((await store.takeBudgetSlot('agent:p', 1000 + hour, hour, 3)).ok).toBe(true);
    // The use at 1001 has left the window; 1002, 1000+h and this one fill it again.
    expect((await store.takeBudgetSlot('agent:p', 1001 + hour, hour, 3)).ok).toBe(true);
    const r = await store.takeBudgetSlot('agent:p', 1001 + hour, hour, 3);
    expect(r).toEqual({ ok: false, retryAtMs: 1002 + hour });
  });

  it('gives a released slot back', async () => {
    const first = await store.takeBudgetSlot('k', 0, 1000, 1);
    expect((await store.takeBudgetSlot('k', 1, 1000, 1)).ok).toBe(false);
    if (first.ok) await store.releaseBudgetSlot(first.slotId);
    expect((await store.takeBudgetSlot('k', 2, 1000, 1)).ok).toBe(true);
  });

  it('keeps visitor points for good and never overwrites one', async () => {
    expect(await store.getVisitorPoint('a|b')).toBeUndefined();
    await store.putVisitorPoint('a|b', { human: 3, ai: 2, total: 4 }, 1);
    await store.putVisitorPoint('a|b', { human: 9, ai: 9, total: 9 }, 2);
    await store.close();
    store = await open(dir);
    expect(await store.getVisitorPoint('a|b')).toEqual({ human: 3, ai: 2, total: 4 });
  });

  it('lets one owner claim a digest period; posted stays posted; a stale claim is taken over', async () => {
    expect(await store.claimDigest('C1', '2026-W47', 'a', 1000, 600_000)).toEqual({
      state: 'claimed',
    });
    expect(await store.claimDigest('C1', '2026-W47', 'b', 2000, 600_000)).toEqual({
      state: 'busy',
      owner: 'a',
    });
    expect(await store.claimDigest('C2', '2026-W47', 'b', 2000, 600_000)).toEqual({
      state: 'claimed',
    });
    expect(await store.claimDigest('C1', '2026-W47', 'b', 700_000, 600_000)).toEqual({
      state: 'stale',
      owner: 'a',
    });
    expect(await store.claimDigest('C1', '2026-W47', 'c', 701_000, 600_000)).toEqual({
      state: 'busy',
      owner: 'b',
    });
    await store.markDigestPosted('C1', '2026-W47', 702_000);
    expect(await store.claimDigest('C1', '2026-W47', 'c', 9_999_999, 600_000)).toEqual({
      state: 'posted',
    });
  });

  it('answers a ping, and counts unsent announcements and budget uses within a window', async () => {
    await store.ping();
    expect(await store.outboxDepth()).toBe(0);
    const t = await store.createThread(thread, 0);
    const done = (kind: 'completed' | 'failed') => ({ key: `job_1:0:${kind}`, kind, prLink: null });
    await store.recordPoll(
      t.id,
      0,
      snap({ status: 'completed' }),
      { nextPollAt: null, pollIntervalMs: 1 },
      [done('completed'), done('failed')],
      10,
    );
    expect(await store.outboxDepth()).toBe(2);
    const [first] = await store.pendingAnnouncements(20, 10);
    await store.markAnnouncementSent(first!.id, 21);
    expect(await store.outboxDepth()).toBe(1);

    for (const at of [100, 200, 300]) await store.takeBudgetSlot('agent:p', at, 1000, 10);
    await store.takeBudgetSlot('analytics', 250, 1000, 10);
    expect(await store.budgetUsed('agent:p', 100)).toBe(2); // after 100, not at it
    expect(await store.budgetUsed('agent:p', 0)).toBe(3);
    expect(await store.budgetUsed('analytics', 0)).toBe(1);
    expect(await store.budgetUsed('nothing', 0)).toBe(0);
  });

  it('fails a ping once closed', async () => {
    await store.close();
    await expect(store.ping()).rejects.toThrow();
    store = await open(dir); // for afterEach
  });
});
