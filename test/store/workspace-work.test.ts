import { expect, it } from 'vitest';
import type { Store } from '../../src/store/types.ts';
import { describeEachEngine } from '../helpers/store-engines.ts';
import { poll, snap, thread } from './fixtures.ts';

/**
 * Distributed mode's bookkeeping of where a job's posts go: a thread and an acked command keep
 * their team's Enterprise Grid org (0018_workspace_wiring), and a team with no install any
 * more has its pending announcements and root updates settled in one go, no other team's.
 */

/** A finished job of a team: its root behind, its announcement in the outbox. */
async function finished(store: Store, teamId: string, ts: string) {
  const t = await store.createThread({ ...thread, teamId, threadTs: ts }, 1);
  await store.attachJob(
    t.id,
    snap({ jobId: `job_${ts}` }),
    { nextPollAt: 5, pollIntervalMs: 5 },
    2,
  );
  await store.recordPoll(
    poll({
      threadId: t.id,
      snapshot: snap({ jobId: `job_${ts}`, status: 'completed', prLink: 'https://x/pull/1' }),
      announcements: [{ key: `done:${ts}`, kind: 'completed', prLink: 'https://x/pull/1' }],
      now: 3,
    }),
  );
  return t.id;
}

describeEachEngine('store: a workspace with no install any more', (db) => {
  it("keeps a thread's and a command's org, and none for a team outside one", async () => {
    const inOrg = await db.store.createThread(
      { ...thread, teamId: 'T0G1', enterpriseId: 'E0G', threadTs: '1.1' },
      1,
    );
    const alone = await db.store.createThread({ ...thread, teamId: 'T0A', threadTs: '1.2' }, 1);
    expect(await db.store.getThread(inOrg.id)).toMatchObject({
      teamId: 'T0G1',
      enterpriseId: 'E0G',
    });
    expect((await db.store.getThread(alone.id))?.enterpriseId).toBeUndefined();
    const command = { channelId: 'C1', userId: 'U1', text: 'Add a page' };
    await db.store.recordPendingCommands(
      [
        { ...command, teamId: 'T0G1', enterpriseId: 'E0G', responseUrl: 'https://r/1' },
        { ...command, teamId: 'T0A', responseUrl: 'https://r/2' },
      ],
      { owner: 'gone', until: 5 },
      1,
    );
    const claimed = await db.store.claimPendingCommands(10, 10, { owner: 'me', until: 20 });
    expect(claimed.map((c) => [c.teamId, c.enterpriseId])).toEqual([
      ['T0G1', 'E0G'],
      ['T0A', undefined],
    ]);
  });

  it("settles a team's unsent announcements with the reason and its roots, leases released, no other team's", async () => {
    const [b1, b2] = [
      await finished(db.store, 'T0B', '2.1'),
      await finished(db.store, 'T0B', '2.2'),
    ];
    const a = await finished(db.store, 'T0A', '1.1');
    // One of Beta's roots is being edited by a replica, one of its announcements in flight.
    await db.store.claimRootUpdate(b1, 4, { owner: 'replica', until: 100 });
    const [first] = await db.store.pendingAnnouncements(4, 1);
    expect(await db.store.markAnnouncementAttempt(first!.id, 0, 100)).toBe(true);

    expect(await db.store.settleWorkspaceWork('T0B', 'not_installed', 5)).toEqual({
      announcements: 2,
      roots: 2,
    });
    const pending = await db.store.pendingAnnouncements(1_000, 10);
    expect(pending.map((p) => p.threadId)).toEqual([a]);
    const roots = await db.store.pendingRootUpdates(1_000, 10);
    expect(roots.map((t) => t.id)).toEqual([a]);
    for (const id of [b1, b2]) {
      const t = await db.store.getThread(id);
      expect(t?.rootShownVersion).toBe(t?.rootVersion);
    }
    // Settled: an attempt made before it cannot take the item back; a second settle finds nothing.
    expect(await db.store.markAnnouncementRetry(first!.id, 1, 200, 'x')).toBe(false);
    expect(await db.store.settleWorkspaceWork('T0B', 'not_installed', 6)).toEqual({
      announcements: 0,
      roots: 0,
    });
    expect(await db.store.outboxDepth()).toBe(1);
  });
});
