import { expect, it } from 'vitest';
import { SINGLE_WORKSPACE as WS } from '../../src/store/scope.ts';
import { describeEachEngine } from '../helpers/store-engines.ts';
import { poll, snap, thread } from './fixtures.ts';

describeEachEngine('store: projects, buttons, App Home and mentions', (db) => {
  it("keeps a thread's project, and each channel's binding until it is replaced or removed", async () => {
    const t = await db.store.createThread({ ...thread, projectId: 'proj_a' }, 1000);
    expect(t.projectId).toBe('proj_a');
    expect(
      (await db.store.createThread({ ...thread, threadTs: '100.2' }, 1000)).projectId,
    ).toBeNull();
    expect(await db.store.channelProject('T1', 'C1')).toBeUndefined();
    await db.store.bindChannelProject({
      teamId: 'T1',
      channelId: 'C1',
      projectId: 'proj_a',
      setBy: 'U1',
      setAt: 5,
    });
    await db.store.bindChannelProject({
      teamId: 'T1',
      channelId: 'C1',
      projectId: 'proj_b',
      setBy: 'U2',
      setAt: 6,
    });
    await db.store.bindChannelProject({
      teamId: 'T2',
      channelId: 'C1',
      projectId: 'proj_c',
      setBy: 'U3',
      setAt: 7,
    });
    expect(await db.store.channelProject('T1', 'C1')).toEqual({
      teamId: 'T1',
      channelId: 'C1',
      projectId: 'proj_b',
      setBy: 'U2',
      setAt: 6,
    });
    expect(await db.store.unbindChannelProject('T1', 'C1')).toBe(true);
    expect(await db.store.unbindChannelProject('T1', 'C1')).toBe(false);
    expect(await db.store.channelProject('T1', 'C1')).toBeUndefined();
    expect((await db.store.channelProject('T2', 'C1'))?.projectId).toBe('proj_c');
  });

  it('keeps a root posted inside a thread apart from the thread key (mentions)', async () => {
    const plain = await db.store.createThread(thread, 0);
    expect(plain).toMatchObject({ threadTs: '100.1', rootTs: '100.1', contextMessages: null });
    expect(await db.store.setRootTs(plain.id, '100.9', 1)).toBe(false); // its root is its parent
    const t = await db.store.createThread(
      { ...thread, threadTs: '200.1', rootTs: 'pending:m', contextMessages: 3 },
      0,
    );
    expect(t).toMatchObject({ threadTs: '200.1', rootTs: 'pending:m', contextMessages: 3 });
    expect(await db.store.setRootTs(t.id, '200.5', 1)).toBe(true);
    expect(await db.store.findThread('T1', 'C1', '200.1')).toMatchObject({
      id: t.id,
      rootTs: '200.5',
    });
    await db.store.startFailed(t.id, 'no', 2);
    expect(await db.store.setRootTs(t.id, '200.6', 3)).toBe(false); // no longer starting
  });

  it('keeps cached report bodies until they expire, replacing and dropping old ones', async () => {
    await db.store.cacheReport(WS, 'insights:a', '{"n":1}', 100, 0);
    await db.store.cacheReport(WS, 'insights:b', '{"n":2}', 50, 0);
    expect(await db.store.cachedReport(WS, 'insights:a', 10)).toBe('{"n":1}');
    await db.store.cacheReport(WS, 'insights:a', '{"n":3}', 200, 10);
    expect(await db.store.cachedReport(WS, 'insights:a', 150)).toBe('{"n":3}');
    expect(await db.store.cachedReport(WS, 'insights:b', 50)).toBeUndefined(); // expired
    expect(await db.store.cachedReport(WS, 'insights:a', 200)).toBeUndefined();
    expect(await db.store.cachedReport(WS, 'insights:none', 0)).toBeUndefined();
  });

  it('keeps the message a job was drafted from, for its root', async () => {
    const origin = { url: 'https://acme.slack.com/archives/C1/p1001', label: 'an insight' };
    const t = await db.store.createThread({ ...thread, threadTs: '300.1', origin }, 0);
    expect(t.origin).toEqual(origin);
    expect((await db.store.getThread(t.id))?.origin).toEqual(origin);
    expect((await db.store.createThread({ ...thread, threadTs: '300.2' }, 0)).origin).toBeNull();
  });

  it("lists a person's jobs still starting or running, newest first, in their workspace only", async () => {
    const mine = async (ts: string, at: number, o: { user?: string; team?: string } = {}) =>
      db.store.createThread(
        { ...thread, threadTs: ts, userId: o.user ?? 'U1', teamId: o.team ?? thread.teamId },
        at,
      );
    const starting = await mine('8.1', 1);
    const running = await mine('8.2', 2);
    await db.store.attachJob(
      running.id,
      snap({ jobId: 'r' }),
      { nextPollAt: 5, pollIntervalMs: 5 },
      2,
    );
    const done = await mine('8.3', 3);
    await db.store.attachJob(
      done.id,
      snap({ jobId: 'd', status: 'completed' }),
      { nextPollAt: null, pollIntervalMs: 5 },
      3,
    );
    const refused = await mine('8.4', 4);
    await db.store.startFailed(refused.id, 'budget spent', 4);
    await mine('8.5', 5, { user: 'U2' });
    await mine('8.6', 6, { team: 'T-other' });
    const ids = (await db.store.activeThreadsOf(thread.teamId, 'U1', 10)).map((t) => t.id);
    expect(ids).toEqual([running.id, starting.id]);
    expect(await db.store.activeThreadsOf(thread.teamId, 'U1', 1)).toHaveLength(1);
    expect(await db.store.activeThreadsOf(thread.teamId, 'U9', 10)).toEqual([]);
  });

  it("lists a person's recent jobs in any state, newest first, leaving out roots not posted yet", async () => {
    const mine = async (ts: string, at: number, o: { user?: string; team?: string } = {}) =>
      db.store.createThread(
        { ...thread, threadTs: ts, userId: o.user ?? 'U1', teamId: o.team ?? thread.teamId },
        at,
      );
    const first = await mine('9.1', 1);
    const done = await mine('9.2', 2);
    await db.store.attachJob(
      done.id,
      snap({ jobId: 'h-done', status: 'completed', prLink: 'https://github.com/a/b/pull/1' }),
      { nextPollAt: null, pollIntervalMs: 5 },
      3,
    );
    const refused = await mine('9.3', 3);
    await db.store.startFailed(refused.id, 'budget spent', 4);
    await mine('pending:abc', 4);
    await mine('9.5', 5, { user: 'U2' });
    await mine('9.6', 6, { team: 'T-other' });
    const recent = await db.store.recentThreadsOf(thread.teamId, 'U1', 10);
    expect(recent.map((t) => [t.id, t.status])).toEqual([
      [refused.id, 'start_failed'],
      [done.id, 'completed'],
      [first.id, 'starting'],
    ]);
    expect(recent[1]?.prLink).toBe('https://github.com/a/b/pull/1');
    expect(await db.store.recentThreadsOf(thread.teamId, 'U1', 2)).toHaveLength(2);
  });

  it('retries a retryable failed start once, and only that', async () => {
    const t = await db.store.createThread(thread, 0);
    const plain = await db.store.createThread({ ...thread, threadTs: '100.2' }, 0);
    await db.store.startFailed(t.id, 'the service is down', 5, 'confirm');
    await db.store.startFailed(plain.id, 'the prompt was rejected', 5);
    expect(await db.store.getThread(t.id)).toMatchObject({ startRetry: 'confirm' });
    expect(await db.store.getThread(plain.id)).toMatchObject({ startRetry: null });
    expect(await db.store.claimRetry(plain.id, 6)).toBeUndefined(); // a retry cannot fix it
    const before = (await db.store.getThread(t.id))?.rootVersion ?? 0;
    const claimed = await db.store.claimRetry(t.id, 10);
    expect(claimed).toMatchObject({
      status: 'starting',
      error: null,
      startRetry: null,
      rootVersion: before + 1,
      updatedAt: 10,
    });
    expect(await db.store.claimRetry(t.id, 11)).toBeUndefined(); // the second click
    // An old thread retried now is not mistaken for a start interrupted long ago.
    expect(await db.store.staleStarting(10)).toEqual([]);
    expect((await db.store.staleStarting(11)).map((x) => x.id)).toEqual([t.id]);
    await db.store.attachJob(t.id, snap(), { nextPollAt: 20, pollIntervalMs: 10 }, 12);
    await db.store.startFailed(t.id, 'again', 13, 'safe'); // no longer starting: nothing changes
    expect(await db.store.claimRetry(t.id, 14)).toBeUndefined();
  });

  it('stops watching a job, refuses a poll in flight, and resumes on a follow-up', async () => {
    const t = await db.store.createThread(thread, 0);
    await db.store.attachJob(t.id, snap(), { nextPollAt: 100, pollIntervalMs: 100 }, 0);
    const [leased] = await db.store.claimDueJobs(100, 10, { owner: 'r1', until: 1_000 });
    expect(leased?.id).toBe(t.id);
    const stopped = await db.store.stopWatching(t.id, 'U1', 150);
    expect(stopped).toMatchObject({ unwatchedBy: 'U1', nextPollAt: null });
    expect(await db.store.stopWatching(t.id, 'U1', 151)).toBeUndefined(); // once
    // The poll that was in flight schedules nothing more, and announces nothing.
    const done = { key: 'job_1:0:completed', kind: 'completed' as const, prLink: null };
    const answer = poll({
      threadId: t.id,
      snapshot: snap({ status: 'completed' }),
      schedule: { nextPollAt: 300, pollIntervalMs: 100 },
      announcements: [done],
      owner: 'r1',
    });
    expect(await db.store.recordPoll(answer)).toBe(false);
    expect(await db.store.getThread(t.id)).toMatchObject({ status: 'active', nextPollAt: null });
    expect(await db.store.pendingAnnouncements(1_000, 10)).toEqual([]);
    expect(await db.store.claimDueJobs(10_000, 10, { owner: 'r1', until: 20_000 })).toEqual([]);
    await db.store.startRound(t.id, snap(), { nextPollAt: 500, pollIntervalMs: 100 }, 400, true);
    expect(await db.store.getThread(t.id)).toMatchObject({ unwatchedBy: null, nextPollAt: 500 });
    // Only a job being watched can stop being watched.
    await db.store.recordPoll(
      poll({ threadId: t.id, round: 1, snapshot: snap({ status: 'failed' }) }),
    );
    expect(await db.store.stopWatching(t.id, 'U1', 600)).toBeUndefined();
  });

  it('remembers the status reaction the root carries', async () => {
    const t = await db.store.createThread(thread, 0);
    expect((await db.store.getThread(t.id))?.rootReaction).toBeNull();
    await db.store.markReactionShown(t.id, 'hourglass_flowing_sand');
    expect(await db.store.getThread(t.id)).toMatchObject({
      rootReaction: 'hourglass_flowing_sand',
    });
  });
});
