import { expect, it } from 'vitest';
import type { JobThread } from '../../src/store/types.ts';
import { describeEachEngine } from '../helpers/store-engines.ts';
import { poll, snap, thread } from './fixtures.ts';

/**
 * Workspaces take turns in what the poller and the notifier fetch: a workspace with a
 * burst of due work cannot fill a batch while another workspace's one item waits behind it.
 */
describeEachEngine('store: workspaces in turn', (db) => {
  let seq = 0;
  /** A watched job of `teamId`, its poll due at `dueAt`, its root shown. */
  async function job(teamId: string, dueAt: number, channelId = `C${teamId}`): Promise<JobThread> {
    const i = ++seq;
    const t = await db.store.createThread({ ...thread, teamId, channelId, threadTs: `${i}.1` }, i);
    const attached = await db.store.attachJob(
      t.id,
      snap({ jobId: `${teamId}-${i}` }),
      { nextPollAt: dueAt, pollIntervalMs: 1 },
      i,
    );
    const lease = { owner: 'setup', until: 1 };
    await db.store.claimRootUpdate(t.id, 0, lease);
    await db.store.markRootShown(t.id, attached.rootVersion, 'setup');
    return attached;
  }
  const teamsOf = (ts: { teamId: string }[]) => ts.map((t) => t.teamId);

  it("leases a quiet workspace's due job beside a busy one's older backlog", async () => {
    for (let i = 0; i < 20; i++) await job('TBUSY', 100 + i);
    await job('TQUIET', 500);
    await job('TOTHER', 600);
    const claimed = await db.store.claimDueJobs(1_000, 4, { owner: 'r1', until: 5_000 });
    // Each workspace's first, then the busy one's next: not the busy one's four oldest.
    expect(teamsOf(claimed).sort()).toEqual(['TBUSY', 'TBUSY', 'TOTHER', 'TQUIET']);
    expect(claimed.find((t) => t.teamId === 'TBUSY')?.nextPollAt).toBe(100);
    // What is left goes oldest first, as before.
    const next = await db.store.claimDueJobs(1_000, 3, { owner: 'r1', until: 5_000 });
    expect(next.map((t) => t.nextPollAt)).toEqual([102, 103, 104]);
  });

  it('keeps oldest due first with one workspace', async () => {
    for (const at of [300, 100, 200]) await job('TONE', at);
    const claimed = await db.store.claimDueJobs(1_000, 2, { owner: 'r1', until: 5_000 });
    expect(claimed.map((t) => t.nextPollAt)).toEqual([100, 200]);
  });

  it('gives two replicas claiming at once full batches of distinct jobs, workspaces in turn', async () => {
    const other = await db.another();
    for (let i = 0; i < 30; i++) await job('TBUSY', i);
    for (let i = 0; i < 3; i++) await job(`TQ${i}`, 100 + i);
    const lease = (owner: string) => ({ owner, until: 5_000 });
    const [a, b] = await Promise.all([
      db.store.claimDueJobs(1_000, 8, lease('r1')),
      other.claimDueJobs(1_000, 8, lease('r2')),
    ]);
    const ids = [...a, ...b].map((t) => t.id);
    expect(new Set(ids).size).toBe(16);
    expect(
      teamsOf([...a, ...b])
        .filter((t) => t.startsWith('TQ'))
        .sort(),
    ).toEqual(['TQ0', 'TQ1', 'TQ2']);
  });

  it('gives eight replicas claiming at once full batches of distinct jobs, workspaces in turn', async () => {
    const stores = [
      db.store,
      ...(await Promise.all(Array.from({ length: 7 }, () => db.another()))),
    ];
    for (let i = 0; i < 40; i++) for (const team of ['TA', 'TB', 'TC', 'TD']) await job(team, i);
    const batches = await Promise.all(
      stores.map((s, i) => s.claimDueJobs(1_000, 8, { owner: `r${i}`, until: 5_000 })),
    );
    // Each its own eight: the first rows another claimer holds are skipped, not waited for.
    expect(batches.map((b) => b.length)).toEqual(Array(8).fill(8));
    const claimed = batches.flat();
    expect(new Set(claimed.map((t) => t.id)).size).toBe(64);
    // Between them, each workspace's sixteen oldest: none took another's turn.
    for (const team of ['TA', 'TB', 'TC', 'TD'])
      expect(
        claimed
          .filter((t) => t.teamId === team)
          .map((t) => t.nextPollAt)
          .sort((x, y) => (x ?? 0) - (y ?? 0)),
      ).toEqual(Array.from({ length: 16 }, (_, i) => i));
  });

  /** `teamId`'s job, finished: its announcement in the outbox, its root behind. */
  async function finished(teamId: string, kind: 'completed' | 'notice' = 'completed') {
    const t = await job(teamId, 1, `C${teamId}${seq}`);
    const key = `${t.jobId}:${kind}`;
    await db.store.recordPoll(
      poll({
        threadId: t.id,
        snapshot: kind === 'completed' ? snap({ jobId: t.jobId!, status: 'completed' }) : null,
        announcements: [{ key, kind, prLink: null, detail: kind === 'notice' ? 'hi' : null }],
        now: seq,
      }),
    );
    return t;
  }

  it("lists a quiet workspace's announcement beside a busy one's older backlog", async () => {
    for (let i = 0; i < 10; i++) await finished('TBUSY');
    await finished('TQUIET');
    const items = await db.store.pendingAnnouncements(10_000, 3);
    expect(items.map((i) => i.teamId)).toEqual(['TBUSY', 'TQUIET', 'TBUSY']);
    const skipped = await db.store.pendingAnnouncements(10_000, 20, { skipTeams: ['TBUSY'] });
    expect(skipped.map((i) => i.teamId)).toEqual(['TQUIET']);
    // One workspace: oldest first.
    const busy = await db.store.pendingAnnouncements(10_000, 20, { skipTeams: ['TQUIET'] });
    expect(busy.map((i) => i.id)).toEqual([...busy.map((i) => i.id)].sort((a, b) => a - b));
    expect(busy).toHaveLength(10);
  });

  it("lists a quiet workspace's root edit beside a busy one's, answers to people first", async () => {
    for (let i = 0; i < 10; i++) await finished('TBUSY');
    const quiet = await finished('TQUIET');
    const refused = await db.store.createThread(
      { ...thread, teamId: 'TBUSY', channelId: 'CR', threadTs: '999.1' },
      10_000,
    );
    await db.store.startFailed(refused.id, 'budget spent', 10_000);
    const roots = await db.store.pendingRootUpdates(20_000, 3);
    // The refusal was the busy workspace's turn: the quiet one's edit goes next.
    expect(roots.map((t) => t.id)).toEqual([refused.id, quiet.id, roots[2]!.id]);
    expect(roots[2]?.teamId).toBe('TBUSY');
    const skipped = await db.store.pendingRootUpdates(20_000, 20, [], ['TBUSY']);
    expect(skipped.map((t) => t.id)).toEqual([quiet.id]);
  });
});
