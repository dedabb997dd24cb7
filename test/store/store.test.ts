import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openPostgresStore } from '../../src/store/postgres.ts';
import { openSqliteStore } from '../../src/store/sqlite.ts';
import type { JobSnapshot, PollRecord, Store } from '../../src/store/types.ts';
import { memoryLogger } from '../helpers/log.ts';
import { createTestDatabase, postgresAvailable } from '../helpers/postgres.ts';

/**
 * One suite for every engine: both must pass exactly these tests. Each test gets a fresh
 * database: a real SQLite file in a temp folder, or a new PostgreSQL database dropped after.
 * `open()` may be called more than once: every call is another process on the same data.
 */
interface Place {
  open(): Promise<Store>;
  cleanup(): Promise<void>;
  /**
   * Whether racers may be separate connections in this test process. SQLite serves one
   * process (a second connection here would busy-wait on the event loop the first one
   * needs), so its racers share one connection; PostgreSQL's are separate pools.
   */
  replicas: boolean;
}
const engines: [string, () => Promise<Place>][] = [
  [
    'sqlite',
    async () => {
      const dir = mkdtempSync(join(tmpdir(), 'store-'));
      return {
        open: () => openSqliteStore(join(dir, 'nested', 'bot.sqlite')),
        cleanup: async () => rmSync(dir, { recursive: true, force: true }),
        replicas: false,
      };
    },
  ],
];
if (postgresAvailable)
  engines.push([
    'postgres',
    async () => {
      const db = await createTestDatabase();
      return {
        open: () => openPostgresStore(db.url, { log: memoryLogger().log, poolSize: 4 }),
        cleanup: () => db.drop(),
        replicas: true,
      };
    },
  ]);

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

const poll = (p: Partial<PollRecord> & Pick<PollRecord, 'threadId'>): PollRecord => ({
  round: 0,
  snapshot: null,
  schedule: { nextPollAt: null, pollIntervalMs: 1 },
  announcements: [],
  now: 0,
  ...p,
});

describe.each(engines)('store (%s)', (_name, setup) => {
  let place: Place;
  let store: Store;
  const others: Store[] = [];
  /** Another replica on the same database, where the engine serves several. */
  const another = async () => {
    if (!place.replicas) return store;
    const s = await place.open();
    others.push(s);
    return s;
  };
  beforeEach(async () => {
    place = await setup();
    store = await place.open();
  });
  afterEach(async () => {
    await store.close();
    for (const s of others.splice(0)) await s.close();
    await place.cleanup();
  });

  it('keeps the thread ↔ job mapping across a reopen', async () => {
    const t = await store.createThread(thread, 1000);
    await store.attachJob(t.id, snap(), { nextPollAt: 6000, pollIntervalMs: 5000 }, 1001);
    await store.close();
    store = await place.open();
    const found = await store.findThread('T1', 'C1', '100.1');
    expect(found).toMatchObject({
      jobId: 'job_1',
      status: 'active',
      nextPollAt: 6000,
      prompt: 'Add a quickstart',
    });
    expect(await store.findThread('T1', 'C1', '999.9')).toBeUndefined();
  });

  it("keeps a thread's project, and each channel's binding until it is replaced or removed", async () => {
    const t = await store.createThread({ ...thread, projectId: 'proj_a' }, 1000);
    expect(t.projectId).toBe('proj_a');
    expect((await store.createThread({ ...thread, threadTs: '100.2' }, 1000)).projectId).toBeNull();
    expect(await store.channelProject('T1', 'C1')).toBeUndefined();
    await store.bindChannelProject({
      teamId: 'T1',
      channelId: 'C1',
      projectId: 'proj_a',
      setBy: 'U1',
      setAt: 5,
    });
    await store.bindChannelProject({
      teamId: 'T1',
      channelId: 'C1',
      projectId: 'proj_b',
      setBy: 'U2',
      setAt: 6,
    });
    await store.bindChannelProject({
      teamId: 'T2',
      channelId: 'C1',
      projectId: 'proj_c',
      setBy: 'U3',
      setAt: 7,
    });
    expect(await store.channelProject('T1', 'C1')).toEqual({
      teamId: 'T1',
      channelId: 'C1',
      projectId: 'proj_b',
      setBy: 'U2',
      setAt: 6,
    });
    expect(await store.unbindChannelProject('T1', 'C1')).toBe(true);
    expect(await store.unbindChannelProject('T1', 'C1')).toBe(false);
    expect(await store.channelProject('T1', 'C1')).toBeUndefined();
    expect((await store.channelProject('T2', 'C1'))?.projectId).toBe('proj_c');
  });

  it('keeps a root posted inside a thread apart from the thread key (mentions)', async () => {
    const plain = await store.createThread(thread, 0);
    expect(plain).toMatchObject({ threadTs: '100.1', rootTs: '100.1', contextMessages: null });
    expect(await store.setRootTs(plain.id, '100.9', 1)).toBe(false); // its root is its parent
    const t = await store.createThread(
      { ...thread, threadTs: '200.1', rootTs: 'pending:m', contextMessages: 3 },
      0,
    );
    expect(t).toMatchObject({ threadTs: '200.1', rootTs: 'pending:m', contextMessages: 3 });
    expect(await store.setRootTs(t.id, '200.5', 1)).toBe(true);
    expect(await store.findThread('T1', 'C1', '200.1')).toMatchObject({
      id: t.id,
      rootTs: '200.5',
    });
    await store.startFailed(t.id, 'no', 2);
    expect(await store.setRootTs(t.id, '200.6', 3)).toBe(false); // no longer starting
  });

  it('refuses a second thread with the same (team, channel, ts)', async () => {
    await store.createThread(thread, 1);
    await expect(store.createThread(thread, 2)).rejects.toThrow();
  });

  it('leases due jobs soonest first to one owner, and stops returning unwatched ones', async () => {
    const a = await store.createThread({ ...thread, threadTs: '1.1' }, 0);
    const b = await store.createThread({ ...thread, threadTs: '1.2' }, 0);
    await store.attachJob(a.id, snap({ jobId: 'a' }), { nextPollAt: 300, pollIntervalMs: 100 }, 0);
    await store.attachJob(b.id, snap({ jobId: 'b' }), { nextPollAt: 200, pollIntervalMs: 100 }, 0);
    expect(await store.nextDueAt()).toBe(200);
    const mine = { owner: 'r1', until: 1_000 };
    expect((await store.claimDueJobs(250, 10, mine)).map((t) => t.jobId)).toEqual(['b']);
    // b is leased: not due again for anyone, and the sleep runs to the lease's end.
    expect((await store.claimDueJobs(400, 10, mine)).map((t) => t.jobId)).toEqual(['a']);
    expect(await store.claimDueJobs(400, 10, { owner: 'r2', until: 2_000 })).toEqual([]);
    expect(await store.nextDueAt()).toBe(1_000);
    expect(
      await store.recordPoll(
        poll({ threadId: b.id, snapshot: snap({ jobId: 'b', status: 'completed' }), owner: 'r1' }),
      ),
    ).toBe(true);
    expect(
      await store.recordPoll(
        poll({
          threadId: a.id,
          snapshot: snap({ jobId: 'a' }),
          schedule: { nextPollAt: 500, pollIntervalMs: 100 },
          owner: 'r1',
        }),
      ),
    ).toBe(true);
    // Recording released the leases; b is finished and no longer watched.
    expect(await store.nextDueAt()).toBe(500);
    expect((await store.claimDueJobs(600, 10, mine)).map((t) => t.jobId)).toEqual(['a']);
  });

  it("takes a dead owner's lease over once it expires, and refuses the old owner's late answer", async () => {
    const t = await store.createThread(thread, 0);
    await store.attachJob(t.id, snap(), { nextPollAt: 10, pollIntervalMs: 10 }, 0);
    expect(await store.claimDueJobs(10, 5, { owner: 'dead', until: 100 })).toHaveLength(1);
    expect(await store.claimDueJobs(99, 5, { owner: 'alive', until: 200 })).toEqual([]);
    expect(await store.claimDueJobs(100, 5, { owner: 'alive', until: 200 })).toHaveLength(1);
    const late = poll({
      threadId: t.id,
      snapshot: snap({ status: 'failed' }),
      announcements: [{ key: 'job_1:0:failed', kind: 'failed', prLink: null }],
      owner: 'dead',
    });
    expect(await store.recordPoll(late)).toBe(false);
    expect(await store.pendingAnnouncements(1_000, 10)).toEqual([]);
    expect(await store.getThread(t.id)).toMatchObject({ status: 'active' });
    expect(await store.recordPoll(poll({ threadId: t.id, snapshot: snap(), owner: 'alive' }))).toBe(
      true,
    );
    // Even after the new owner recorded and released, the old one stays refused.
    expect(await store.recordPoll(late)).toBe(false);
  });

  it('records a batch of polls in one go, fencing each item on its own', async () => {
    const ids: number[] = [];
    for (const [i, name] of ['ok', 'taken', 'followed', 'failing'].entries()) {
      const t = await store.createThread({ ...thread, threadTs: `3.${i}` }, 0);
      const due = name === 'taken' ? 5 : 10;
      await store.attachJob(
        t.id,
        snap({ jobId: name }),
        { nextPollAt: due, pollIntervalMs: 10 },
        0,
      );
      ids.push(t.id);
    }
    const [ok, taken, followed, failing] = ids as [number, number, number, number];
    expect(await store.claimDueJobs(5, 10, { owner: 'r1', until: 100 })).toHaveLength(1);
    expect(await store.claimDueJobs(10, 10, { owner: 'r1', until: 1_000 })).toHaveLength(3);
    // r1 stalls: its lease on `taken` runs out and r2 takes the job over; a follow-up
    // starts round 1 of `followed` meanwhile.
    expect(await store.claimDueJobs(100, 10, { owner: 'r2', until: 500 })).toHaveLength(1);
    await store.startRound(
      followed,
      snap({ jobId: 'followed' }),
      { nextPollAt: 400, pollIntervalMs: 10 },
      90,
      true,
    );
    const done = { key: 'ok:0:completed', kind: 'completed' as const, prLink: 'https://x/pr/1' };
    const results = await store.recordPolls([
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
    expect(await store.getThread(ok)).toMatchObject({
      status: 'completed',
      nextPollAt: null,
      changedAt: 120,
      rootVersion: 3,
    });
    // The refused items changed nothing: r2 still holds `taken`, `followed` keeps its round.
    expect(await store.getThread(taken)).toMatchObject({ status: 'active', nextPollAt: 5 });
    expect(await store.claimDueJobs(100, 10, { owner: 'r3', until: 600 })).toEqual([]);
    expect(await store.getThread(followed)).toMatchObject({
      round: 1,
      status: 'active',
      nextPollAt: 400,
    });
    expect(await store.getThread(failing)).toMatchObject({
      nextPollAt: 700,
      pollFailingSince: 110,
      changedAt: 0,
      rootVersion: 2,
    });
    expect((await store.pendingAnnouncements(1_000, 10)).map((p) => p.announcement)).toEqual([
      { ...done, detail: null },
    ]);
    // Every lease r1 held was given back: `followed` is due for its new round, to anyone.
    expect(
      (await store.claimDueJobs(400, 10, { owner: 'r3', until: 900 })).map((t) => t.id),
    ).toEqual([followed]);
    expect(await store.recordPolls([])).toEqual([]);
  });

  it('records one thread twice in a batch as two polls in a row would', async () => {
    const t = await store.createThread(thread, 0);
    await store.attachJob(t.id, snap(), { nextPollAt: 10, pollIntervalMs: 10 }, 0);
    await store.claimDueJobs(10, 1, { owner: 'r1', until: 100 });
    const first = poll({
      threadId: t.id,
      snapshot: snap(),
      schedule: { nextPollAt: 20, pollIntervalMs: 10 },
      owner: 'r1',
    });
    // The first released the lease, so the second (same owner) is refused, as it would be alone.
    expect(
      await store.recordPolls([
        first,
        { ...first, schedule: { nextPollAt: 90, pollIntervalMs: 10 } },
      ]),
    ).toEqual([true, false]);
    expect((await store.getThread(t.id))?.nextPollAt).toBe(20);
  });

  it('gives back the leases an owner holds when it stops', async () => {
    const t = await store.createThread(thread, 0);
    await store.attachJob(t.id, snap(), { nextPollAt: 10, pollIntervalMs: 10 }, 0);
    await store.claimDueJobs(10, 5, { owner: 'r1', until: 10_000 });
    await store.claimRootUpdate(t.id, 10, { owner: 'r1', until: 10_000 });
    await store.releaseLeases('r2');
    expect(await store.claimDueJobs(20, 5, { owner: 'r2', until: 10_000 })).toEqual([]);
    await store.releaseLeases('r1');
    expect(await store.claimDueJobs(20, 5, { owner: 'r2', until: 10_000 })).toHaveLength(1);
    expect(await store.claimRootUpdate(t.id, 20, { owner: 'r2', until: 10_000 })).toBeDefined();
  });

  it('bumps the root version only when what the root shows changed', async () => {
    const t = await store.createThread(thread, 0);
    const attached = await store.attachJob(t.id, snap(), { nextPollAt: 1, pollIntervalMs: 1 }, 0);
    expect(attached.rootVersion).toBe(2);
    await store.recordPoll(
      poll({ threadId: t.id, snapshot: snap(), schedule: { nextPollAt: 2, pollIntervalMs: 2 } }),
    );
    expect((await store.getThread(t.id))?.rootVersion).toBe(2);
    await store.recordPoll(
      poll({ threadId: t.id, snapshot: snap({ status: 'completed', prLink: 'https://x/pr/1' }) }),
    );
    expect((await store.getThread(t.id))?.rootVersion).toBe(3);
  });

  it('leases each root update to one owner, coalesces, and never moves the shown version back', async () => {
    const t = await store.createThread(thread, 0); // version 1, shown 1
    await store.attachJob(t.id, snap(), { nextPollAt: 1, pollIntervalMs: 1 }, 0); // 2
    await store.recordPoll(poll({ threadId: t.id, snapshot: snap({ status: 'completed' }) })); // 3
    const claim = (now: number, owner: string, until: number) =>
      store.claimRootUpdate(t.id, now, { owner, until });
    expect(await store.pendingRootUpdates(10, 10)).toMatchObject([{ id: t.id }]);
    const claimed = await claim(10, 'r1', 100);
    expect(claimed).toMatchObject({ id: t.id, rootVersion: 3, rootShownVersion: 1 });
    expect(await store.pendingRootUpdates(10, 10)).toEqual([]); // leased: not pending
    expect(await claim(10, 'r2', 100)).toBeUndefined();
    // Slack said "later": the lease is kept until then.
    await store.deferRootUpdate(t.id, 'r1', 500);
    expect(await claim(200, 'r2', 900)).toBeUndefined();
    expect(await store.pendingRootUpdates(500, 10)).toHaveLength(1);
    expect(await claim(500, 'r2', 900)).toBeDefined();
    await store.markRootShown(t.id, 3, 'r2');
    expect(await store.pendingRootUpdates(600, 10)).toEqual([]);
    expect(await claim(600, 'r2', 900)).toBeUndefined(); // shown: nothing to claim
    await store.markRootShown(t.id, 2, 'r1'); // a late, older update never moves it back
    expect((await store.getThread(t.id))?.rootShownVersion).toBe(3);
  });

  it('lists pending root updates unleased, never-edited roots first, leaving out the ones asked', async () => {
    const shown = async (ts: string) => {
      const t = await store.createThread({ ...thread, threadTs: ts }, 0);
      await store.attachJob(
        t.id,
        snap({ jobId: `j${ts}` }),
        { nextPollAt: null, pollIntervalMs: 1 },
        0,
      );
      await store.claimRootUpdate(t.id, 0, { owner: 'r0', until: 1 });
      await store.markRootShown(t.id, 2, 'r0');
      await store.recordPoll(
        poll({ threadId: t.id, snapshot: snap({ jobId: `j${ts}`, status: 'completed' }), now: 5 }),
      );
      return t;
    };
    const a = await shown('1.1'); // shown before, changed since
    const b = await shown('1.2');
    const refused = await store.createThread({ ...thread, threadTs: '1.3' }, 0);
    await store.startFailed(refused.id, 'budget spent', 10); // its first edit since posted
    const started = await store.createThread({ ...thread, threadTs: '1.4' }, 0);
    await store.attachJob(
      started.id,
      snap({ jobId: 'j1.4' }),
      { nextPollAt: null, pollIntervalMs: 1 },
      20,
    );
    const ids = async (skip?: number[], limit = 10) =>
      (await store.pendingRootUpdates(100, limit, skip)).map((t) => t.id);
    expect(await ids()).toEqual([refused.id, started.id, a.id, b.id]);
    expect(await ids(undefined, 1)).toEqual([refused.id]);
    expect(await ids([refused.id, a.id])).toEqual([started.id, b.id]);
    await store.claimRootUpdate(b.id, 100, { owner: 'r1', until: 200 });
    expect(await ids()).toEqual([refused.id, started.id, a.id]);
  });

  it('ignores a poll answer from before a follow-up started a new round', async () => {
    const t = await store.createThread(thread, 0);
    await store.attachJob(t.id, snap(), { nextPollAt: 5, pollIntervalMs: 5 }, 0);
    await store.claimDueJobs(5, 1, { owner: 'r1', until: 1_000 });
    await store.startRound(t.id, snap(), { nextPollAt: 50, pollIntervalMs: 5 }, 10, true);
    const stale = { key: 'job_1:0:completed', kind: 'completed' as const, prLink: null };
    expect(
      await store.recordPoll(
        poll({
          threadId: t.id,
          snapshot: snap({ status: 'completed' }),
          announcements: [stale],
          now: 11,
          owner: 'r1',
        }),
      ),
    ).toBe(false);
    expect(await store.getThread(t.id)).toMatchObject({
      round: 1,
      status: 'active',
      nextPollAt: 50,
      followUpAt: 10,
    });
    expect(await store.pendingAnnouncements(100, 10)).toEqual([]);
    // The stale poll gave its lease back: the new round is polled when due, not later.
    expect(await store.claimDueJobs(50, 1, { owner: 'r2', until: 1_000 })).toHaveLength(1);
    expect(
      await store.recordPoll(
        poll({
          threadId: t.id,
          round: 1,
          snapshot: snap(),
          schedule: { nextPollAt: 60, pollIntervalMs: 5 },
          now: 12,
        }),
      ),
    ).toBe(true);
    expect((await store.getThread(t.id))?.followUpAt).toBeNull(); // seen active again
  });

  it("lists a person's jobs still starting or running, newest first, in their workspace only", async () => {
    const mine = async (ts: string, at: number, o: { user?: string; team?: string } = {}) =>
      store.createThread(
        { ...thread, threadTs: ts, userId: o.user ?? 'U1', teamId: o.team ?? thread.teamId },
        at,
      );
    const starting = await mine('8.1', 1);
    const running = await mine('8.2', 2);
    await store.attachJob(
      running.id,
      snap({ jobId: 'r' }),
      { nextPollAt: 5, pollIntervalMs: 5 },
      2,
    );
    const done = await mine('8.3', 3);
    await store.attachJob(
      done.id,
      snap({ jobId: 'd', status: 'completed' }),
      { nextPollAt: null, pollIntervalMs: 5 },
      3,
    );
    const refused = await mine('8.4', 4);
    await store.startFailed(refused.id, 'budget spent', 4);
    await mine('8.5', 5, { user: 'U2' });
    await mine('8.6', 6, { team: 'T-other' });
    const ids = (await store.activeThreadsOf(thread.teamId, 'U1', 10)).map((t) => t.id);
    expect(ids).toEqual([running.id, starting.id]);
    expect(await store.activeThreadsOf(thread.teamId, 'U1', 1)).toHaveLength(1);
    expect(await store.activeThreadsOf(thread.teamId, 'U9', 10)).toEqual([]);
  });

  it("lists a person's recent jobs in any state, newest first, leaving out roots not posted yet", async () => {
    const mine = async (ts: string, at: number, o: { user?: string; team?: string } = {}) =>
      store.createThread(
        { ...thread, threadTs: ts, userId: o.user ?? 'U1', teamId: o.team ?? thread.teamId },
        at,
      );
    const first = await mine('9.1', 1);
    const done = await mine('9.2', 2);
    await store.attachJob(
      done.id,
      snap({ jobId: 'h-done', status: 'completed', prLink: 'https://github.com/a/b/pull/1' }),
      { nextPollAt: null, pollIntervalMs: 5 },
      3,
    );
    const refused = await mine('9.3', 3);
    await store.startFailed(refused.id, 'budget spent', 4);
    await mine('pending:abc', 4);
    await mine('9.5', 5, { user: 'U2' });
    await mine('9.6', 6, { team: 'T-other' });
    const recent = await store.recentThreadsOf(thread.teamId, 'U1', 10);
    expect(recent.map((t) => [t.id, t.status])).toEqual([
      [refused.id, 'start_failed'],
      [done.id, 'completed'],
      [first.id, 'starting'],
    ]);
    expect(recent[1]?.prLink).toBe('https://github.com/a/b/pull/1');
    expect(await store.recentThreadsOf(thread.teamId, 'U1', 2)).toHaveLength(2);
  });

  it('keeps the last report headline, replacing the one before', async () => {
    expect(await store.lastReportHeadline()).toBeUndefined();
    const h = {
      from: '2026-01-01',
      to: '2026-01-08',
      timeZone: 'UTC',
      totals: { human: 10, ai: 5, total: 14 },
      previousTotals: { human: 8, ai: 1, total: 9 },
      partial: false,
      generatedAt: 1_767_000_000_000,
    };
    await store.putReportHeadline(h);
    expect(await store.lastReportHeadline()).toEqual(h);
    const next = {
      ...h,
      from: '2026-01-08',
      to: '2026-01-15',
      partial: true,
      generatedAt: h.generatedAt + 1,
    };
    await store.putReportHeadline(next);
    expect(await store.lastReportHeadline()).toEqual(next);
  });

  it('says when the oldest budget use in a window was', async () => {
    expect(await store.oldestBudgetUse('agent:p', 0)).toBeNull();
    for (const at of [50, 20, 80]) await store.takeBudgetSlot('agent:p', at, 1_000, 10);
    await store.takeBudgetSlot('analytics', 5, 1_000, 10);
    expect(await store.oldestBudgetUse('agent:p', 0)).toBe(20);
    expect(await store.oldestBudgetUse('agent:p', 20)).toBe(50); // after 20, not at it
  });

  it('puts each announcement key in the outbox once, and fences marks by attempt', async () => {
    const t = await store.createThread(thread, 0);
    const a = { key: 'job_1:0:completed', kind: 'completed' as const, prLink: 'https://x/pr/1' };
    const done = snap({ status: 'completed' });
    await store.recordPoll(poll({ threadId: t.id, snapshot: done, announcements: [a], now: 10 }));
    await store.recordPoll(poll({ threadId: t.id, snapshot: done, announcements: [a], now: 11 }));
    const pending = await store.pendingAnnouncements(20, 10);
    expect(pending).toHaveLength(1);
    expect(pending[0]).toMatchObject({ threadId: t.id, attempts: 0, announcement: a });
    const id = pending[0]!.id;
    expect(await store.markAnnouncementAttempt(id, 0, 80)).toBe(true);
    expect(await store.markAnnouncementAttempt(id, 0, 80)).toBe(false); // someone else's now
    expect(await store.pendingAnnouncements(50, 10)).toEqual([]); // leased while being posted
    expect(await store.pendingAnnouncements(80, 10)).toHaveLength(1); // the poster died: due again
    expect(await store.markAnnouncementRetry(id, 1, 100, 'ratelimited')).toBe(true);
    expect(await store.pendingAnnouncements(50, 10)).toEqual([]);
    expect((await store.pendingAnnouncements(100, 10))[0]?.attempts).toBe(1);
    // Another replica takes attempt 2; the first one's late marks for attempt 1 are refused.
    expect(await store.markAnnouncementAttempt(id, 1, 200)).toBe(true);
    expect(await store.markAnnouncementRetry(id, 1, 100, 'late')).toBe(false);
    expect(await store.markAnnouncementSent(id, 1, 150)).toBe(false);
    expect(await store.markAnnouncementSent(id, 2, 160)).toBe(true);
    expect(await store.pendingAnnouncements(1000, 10)).toEqual([]);
    expect(await store.markAnnouncementAttempt(id, 2, 2_000)).toBe(false); // sent stays sent
  });

  it('leaves out of the pending announcements the ids, channels and kinds asked', async () => {
    const inChannel = async (channelId: string, ts: string, kind: 'completed' | 'notice') => {
      const t = await store.createThread({ ...thread, channelId, threadTs: ts }, 0);
      const a = { key: `k${ts}`, kind, prLink: null, detail: kind === 'notice' ? 'hi' : null };
      await store.recordPoll(poll({ threadId: t.id, announcements: [a], now: 1 }));
      return (await store.pendingAnnouncements(1, 100)).find((i) => i.announcement.key === a.key)!;
    };
    const a1 = await inChannel('CA', '1.1', 'completed');
    const a2 = await inChannel('CA', '1.2', 'completed');
    const b1 = await inChannel('CB', '2.1', 'completed');
    const n1 = await inChannel('CA', '1.3', 'notice');
    const ids = async (filter?: Parameters<Store['pendingAnnouncements']>[2], limit = 10) =>
      (await store.pendingAnnouncements(5, limit, filter)).map((i) => i.id);
    expect(await store.pendingAnnouncements(5, 1)).toEqual([
      expect.objectContaining({ id: a1.id, channelId: 'CA', threadId: a1.threadId }),
    ]);
    expect(await ids()).toEqual([a1.id, a2.id, b1.id, n1.id]);
    expect(await ids({ skipIds: [a1.id, b1.id] })).toEqual([a2.id, n1.id]);
    expect(await ids({ skipChannels: ['CA'] })).toEqual([b1.id]);
    expect(await ids({ kinds: ['notice'] })).toEqual([n1.id]);
    expect(await ids({ kinds: [] })).toEqual([]);
    expect(await ids({ skipIds: [a1.id], skipChannels: ['CB'] }, 1)).toEqual([a2.id]);
  });

  it('records a reply once, by its event or its own key, and moves it through its states', async () => {
    const t = await store.createThread(thread, 0);
    const reply = {
      threadId: t.id,
      replyKey: 'C1:7.1',
      replyTs: '7.1',
      userId: 'U2',
      text: 'More',
    };
    const f = await store.recordFollowUp(reply, ['event:Ev7'], 10);
    expect(f).toMatchObject({ state: 'received', text: 'More', createdAt: 10 });
    expect(await store.recordFollowUp(reply, ['event:Ev7'], 11)).toBeUndefined();
    expect(await store.recordFollowUp(reply, ['event:Ev8'], 12)).toBeUndefined(); // same message
    expect(await store.staleFollowUps('received', 11, 10)).toHaveLength(1);
    expect(await store.staleFollowUps('received', 10, 10)).toEqual([]);
    expect(await store.moveFollowUp(f!.id, ['received'], 'sending', 20)).toBe(true);
    expect(await store.moveFollowUp(f!.id, ['received'], 'sending', 21)).toBe(false); // taken
    const [sending] = await store.staleFollowUps('sending', 30, 10);
    const notice = {
      key: 'reply:C1:7.1:uncertain',
      kind: 'notice' as const,
      prLink: null,
      detail: 'Maybe',
    };
    expect(await store.followUpUncertain(sending!, notice, 40)).toBe(true);
    expect(await store.followUpUncertain(sending!, notice, 41)).toBe(false); // told once
    const pending = await store.pendingAnnouncements(100, 10);
    expect(pending.map((p) => p.announcement)).toEqual([notice]);
    await store.pruneEvents(1_000);
    expect(await store.recordFollowUp(reply, [], 1_001)).toMatchObject({ state: 'received' });
  });

  it('keeps a start found by its marker, and forgets one that never posted', async () => {
    const a = await store.createThread({ ...thread, threadTs: 'pending:a' }, 0);
    const b = await store.createThread({ ...thread, threadTs: 'pending:b' }, 0);
    expect(await store.setThreadTs(a.id, '200.1', 1)).toBe(true);
    expect(await store.findThread('T1', 'C1', '200.1')).toMatchObject({ id: a.id });
    await store.forgetStart(b.id);
    expect(await store.getThread(b.id)).toBeUndefined();
    await store.startFailed(a.id, 'interrupted', 2);
    expect(await store.startFailed(a.id, 'again', 3)).toBeUndefined(); // settled once
    expect(await store.setThreadTs(a.id, '300.1', 4)).toBe(false); // no longer starting
    await store.forgetStart(a.id); // only a start with nothing behind it is forgotten
    expect(await store.getThread(a.id)).toMatchObject({ threadTs: '200.1', error: 'interrupted' });
  });

  it('retries a retryable failed start once, and only that', async () => {
    const t = await store.createThread(thread, 0);
    const plain = await store.createThread({ ...thread, threadTs: '100.2' }, 0);
    await store.startFailed(t.id, 'the service is down', 5, 'confirm');
    await store.startFailed(plain.id, 'the prompt was rejected', 5);
    expect(await store.getThread(t.id)).toMatchObject({ startRetry: 'confirm' });
    expect(await store.getThread(plain.id)).toMatchObject({ startRetry: null });
    expect(await store.claimRetry(plain.id, 6)).toBeUndefined(); // a retry cannot fix it
    const before = (await store.getThread(t.id))?.rootVersion ?? 0;
    const claimed = await store.claimRetry(t.id, 10);
    expect(claimed).toMatchObject({
      status: 'starting',
      error: null,
      startRetry: null,
      rootVersion: before + 1,
      updatedAt: 10,
    });
    expect(await store.claimRetry(t.id, 11)).toBeUndefined(); // the second click
    // An old thread retried now is not mistaken for a start interrupted long ago.
    expect(await store.staleStarting(10)).toEqual([]);
    expect((await store.staleStarting(11)).map((x) => x.id)).toEqual([t.id]);
    await store.attachJob(t.id, snap(), { nextPollAt: 20, pollIntervalMs: 10 }, 12);
    await store.startFailed(t.id, 'again', 13, 'safe'); // no longer starting: nothing changes
    expect(await store.claimRetry(t.id, 14)).toBeUndefined();
  });

  it('lets one of two racing replicas claim a retry', async () => {
    const t = await store.createThread(thread, 0);
    await store.startFailed(t.id, 'rate limited', 1, 'safe');
    const other = await another();
    const wins = await Promise.all([store.claimRetry(t.id, 2), other.claimRetry(t.id, 2)]);
    expect(wins.filter(Boolean)).toHaveLength(1);
  });

  it('stops watching a job, refuses a poll in flight, and resumes on a follow-up', async () => {
    const t = await store.createThread(thread, 0);
    await store.attachJob(t.id, snap(), { nextPollAt: 100, pollIntervalMs: 100 }, 0);
    const [leased] = await store.claimDueJobs(100, 10, { owner: 'r1', until: 1_000 });
    expect(leased?.id).toBe(t.id);
    const stopped = await store.stopWatching(t.id, 'U1', 150);
    expect(stopped).toMatchObject({ unwatchedBy: 'U1', nextPollAt: null });
    expect(await store.stopWatching(t.id, 'U1', 151)).toBeUndefined(); // once
    // The poll that was in flight schedules nothing more, and announces nothing.
    const done = { key: 'job_1:0:completed', kind: 'completed' as const, prLink: null };
    const answer = poll({
      threadId: t.id,
      snapshot: snap({ status: 'completed' }),
      schedule: { nextPollAt: 300, pollIntervalMs: 100 },
      announcements: [done],
      owner: 'r1',
    });
    expect(await store.recordPoll(answer)).toBe(false);
    expect(await store.getThread(t.id)).toMatchObject({ status: 'active', nextPollAt: null });
    expect(await store.pendingAnnouncements(1_000, 10)).toEqual([]);
    expect(await store.claimDueJobs(10_000, 10, { owner: 'r1', until: 20_000 })).toEqual([]);
    await store.startRound(t.id, snap(), { nextPollAt: 500, pollIntervalMs: 100 }, 400, true);
    expect(await store.getThread(t.id)).toMatchObject({ unwatchedBy: null, nextPollAt: 500 });
    // Only a job being watched can stop being watched.
    await store.recordPoll(
      poll({ threadId: t.id, round: 1, snapshot: snap({ status: 'failed' }) }),
    );
    expect(await store.stopWatching(t.id, 'U1', 600)).toBeUndefined();
  });

  it('remembers the status reaction the root carries', async () => {
    const t = await store.createThread(thread, 0);
    expect((await store.getThread(t.id))?.rootReaction).toBeNull();
    await store.markReactionShown(t.id, 'hourglass_flowing_sand');
    expect(await store.getThread(t.id)).toMatchObject({ rootReaction: 'hourglass_flowing_sand' });
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

  it('keeps visitor points durably; a later put replaces the point and its fetch time', async () => {
    expect(await store.getVisitorPoint('a|b')).toBeUndefined();
    await store.putVisitorPoint('a|b', { human: 3, ai: 2, total: 4 }, 1);
    await store.putVisitorPoint('c|d', { human: 1, ai: 1, total: 1 }, 1);
    expect(await store.getVisitorPoint('a|b')).toEqual({ human: 3, ai: 2, total: 4, fetchedAt: 1 });
    await store.putVisitorPoint('a|b', { human: 9, ai: 8, total: 12 }, 2);
    await store.close();
    store = await place.open();
    expect(await store.getVisitorPoint('a|b')).toEqual({
      human: 9,
      ai: 8,
      total: 12,
      fetchedAt: 2,
    });
    expect(await store.getVisitorPoint('c|d')).toEqual({ human: 1, ai: 1, total: 1, fetchedAt: 1 });
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
    expect(await store.markDigestPosted('C1', '2026-W47', 'a', 702_000)).toBe(false); // b's now
    expect(await store.markDigestPosted('C1', '2026-W47', 'b', 702_000)).toBe(true);
    expect(await store.claimDigest('C1', '2026-W47', 'c', 9_999_999, 600_000)).toEqual({
      state: 'posted',
    });
  });
  it('keeps a digest claim alive while its owner beats, and lets it go when the beats stop', async () => {
    const stale = 600_000;
    expect(await store.claimDigest('C1', 'W1', 'a', 0, stale)).toEqual({ state: 'claimed' });
    expect(await store.heartbeatDigest('C1', 'W1', 'a', 500_000)).toBe(true);
    // 900 s after the claim but 400 s after the last beat: still alive.
    expect(await store.claimDigest('C1', 'W1', 'b', 900_000, stale)).toEqual({
      state: 'busy',
      owner: 'a',
    });
    expect(await store.claimDigest('C1', 'W1', 'b', 1_100_000, stale)).toEqual({
      state: 'stale',
      owner: 'a',
    });
    expect(await store.heartbeatDigest('C1', 'W1', 'a', 1_100_001)).toBe(false); // taken over
    expect(await store.heartbeatDigest('C1', 'W1', 'b', 1_100_002)).toBe(true);
  });

  it('never hands out more budget than the limit when replicas race for the last slots', async () => {
    const b = await another();
    const hour = 3_600_000;
    const tries = Array.from({ length: 40 }, (_, i) =>
      (i % 2 ? b : store).takeBudgetSlot('agent:p', 1_000 + i, hour, 25),
    );
    const results = await Promise.all(tries);
    expect(results.filter((r) => r.ok)).toHaveLength(25);
    expect(results.filter((r) => !r.ok)).toHaveLength(15);
  });

  it('leases each due job to one of two racing replicas', async () => {
    const b = await another();
    for (let i = 0; i < 30; i++) {
      const t = await store.createThread({ ...thread, threadTs: `5.${i}` }, 0);
      await store.attachJob(
        t.id,
        snap({ jobId: `j${i}` }),
        { nextPollAt: i, pollIntervalMs: 1 },
        0,
      );
    }
    const claims = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        (i % 2 ? b : store).claimDueJobs(100, 4, { owner: `r${i % 2}`, until: 1_000 }),
      ),
    );
    const ids = claims.flat().map((t) => t.jobId);
    expect(ids).toHaveLength(30);
    expect(new Set(ids).size).toBe(30);
  });

  it('leases each root update to one of two racing replicas', async () => {
    const b = await another();
    const threads = [];
    for (let i = 0; i < 20; i++) {
      const t = await store.createThread({ ...thread, threadTs: `6.${i}` }, 0);
      threads.push(
        await store.attachJob(
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
        [store, b].map((s, r) => s.claimRootUpdate(t.id, 10, { owner: `r${r}`, until: 1_000 })),
      ),
    );
    const won = claims.filter((c) => c !== undefined).map((c) => c.id);
    expect(won.sort((x, y) => x - y)).toEqual(threads.map((t) => t.id));
  });

  it('records overlapping batches from two replicas without deadlocking', async () => {
    const b = await another();
    const ids: number[] = [];
    for (let i = 0; i < 20; i++) {
      const t = await store.createThread({ ...thread, threadTs: `6.${i}` }, 0);
      await store.attachJob(
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
        (i % 2 ? b : store).recordPolls(batch(i % 2 ? [...ids].reverse() : ids, 10 + i)),
      ),
    );
    expect(results.flat().every(Boolean)).toBe(true);
  });

  it('says when the next poll falls due from the index, leases included, at scale', async () => {
    expect(await store.nextDueAt()).toBeNull();
    for (let i = 0; i < 50; i++) {
      const t = await store.createThread({ ...thread, threadTs: `7.${i}` }, 0);
      await store.attachJob(
        t.id,
        snap({ jobId: `n${i}` }),
        { nextPollAt: 1_000 + i, pollIntervalMs: 1 },
        0,
      );
    }
    expect(await store.nextDueAt()).toBe(1_000);
    // The three soonest are leased until 1_020: the soonest free one is 1_003, the lease later.
    await store.claimDueJobs(1_002, 3, { owner: 'r1', until: 1_020 });
    expect(await store.nextDueAt()).toBe(1_003);
    await store.claimDueJobs(1_049, 47, { owner: 'r1', until: 1_020 });
    expect(await store.nextDueAt()).toBe(1_020);
  });

  it('lets one of two racing replicas claim a Slack event', async () => {
    const b = await another();
    const results = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        (i % 2 ? b : store).claimEvent(['event:E1', 'msg:C:1'], i),
      ),
    );
    expect(results.filter(Boolean)).toHaveLength(1);
  });

  it('lets one of two racing replicas claim a digest period', async () => {
    const b = await another();
    const results = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        (i % 2 ? b : store).claimDigest('C1', 'W9', `r${i}`, 1_000, 600_000),
      ),
    );
    expect(results.filter((r) => r.state === 'claimed')).toHaveLength(1);
  });
  it('answers a ping, and counts unsent announcements and budget uses within a window', async () => {
    await store.ping();
    expect(await store.outboxDepth()).toBe(0);
    const t = await store.createThread(thread, 0);
    const done = (kind: 'completed' | 'failed') => ({ key: `job_1:0:${kind}`, kind, prLink: null });
    await store.recordPoll(
      poll({
        threadId: t.id,
        snapshot: snap({ status: 'completed' }),
        announcements: [done('completed'), done('failed')],
        now: 10,
      }),
    );
    expect(await store.outboxDepth()).toBe(2);
    const [first] = await store.pendingAnnouncements(20, 10);
    await store.markAnnouncementAttempt(first!.id, 0, 100);
    await store.markAnnouncementSent(first!.id, 1, 21);
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
    store = await place.open(); // for afterEach
  });
});

describe.skipIf(!postgresAvailable)('postgres engine', () => {
  it('applies migrations once when replicas start together', async () => {
    const db = await createTestDatabase();
    try {
      const opened = await Promise.all(
        Array.from({ length: 4 }, () =>
          openPostgresStore(db.url, { log: memoryLogger().log, poolSize: 2 }),
        ),
      );
      const t = await opened[0]!.createThread(thread, 1);
      expect((await opened[3]!.getThread(t.id))?.prompt).toBe(thread.prompt);
      for (const s of opened) await s.close();
    } finally {
      await db.drop();
    }
  });

  it('fails to open with a readable error that keeps the password out', async () => {
    const url = 'postgres://bot:hunter2-secret@127.0.0.1:1/nowhere';
    const err = await openPostgresStore(url, { log: memoryLogger().log }).catch((e: Error) => e);
    expect(err).toBeInstanceOf(Error);
    expect((err as Error).message).toMatch(/could not open the PostgreSQL database/);
    expect((err as Error).message).not.toContain('hunter2-secret');
  });
});
