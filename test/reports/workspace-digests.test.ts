import { describe, expect, it } from 'vitest';
import { startDigest } from '../../src/reports/digest.ts';
import type { DigestPart } from '../../src/reports/digest-parts.ts';
import { digestPeriod } from '../../src/reports/range.ts';
import {
  startWorkspaceDigests,
  type WorkspaceDigestPlan,
} from '../../src/reports/workspace-digests.ts';
import { SINGLE_WORKSPACE } from '../../src/store/scope.ts';
import type { Store, WorkspaceRef } from '../../src/store/types.ts';
import { createDocsReader } from '../../src/workspaces/docs-admin.ts';
import { memoryLogger } from '../helpers/log.ts';
import { describeEachEngine } from '../helpers/store-engines.ts';

/**
 * Distributed mode's digests: each connected workspace's own, claimed under its workspace
 * (one post per workspace and period across replicas, one workspace's claim never blocking
 * another's, even in a channel both post in), and followed as workspaces connect, change
 * their settings and go.
 */
const A = { teamId: 'T0A', enterpriseId: null };
const B = { teamId: 'T0B', enterpriseId: null };
const SHARED = 'C0SHARED';
const MONDAY = new Date('2026-11-23T09:00:00Z');

/** A part that posts into `posted` (what the channel holds) and finds what is there. */
function part(posted: string[], who: string): DigestPart {
  return {
    name: 'traffic',
    label: 'the traffic report',
    inChannel: async (_c, key) => (posted.includes(`${who}:${key}`) ? { ts: '1.1' } : undefined),
    build: async (_range, key) => async () => {
      posted.push(`${who}:${key}`);
      return '1.1';
    },
  };
}

function digestOf(store: Store, ws: WorkspaceRef, owner: string, posted: string[], who: string) {
  return startDigest({
    store,
    log: memoryLogger().log,
    owner,
    ws,
    channelId: SHARED,
    notice: async () => {},
    parts: [part(posted, who)],
    cron: '0 9 * * 1',
    timeZone: 'UTC',
    now: () => MONDAY.getTime() + 1_000,
    catchUpMs: 0,
  });
}

describeEachEngine('digests: one per workspace and period', (db) => {
  it("posts each workspace's digest once across replicas, in a channel both post in", async () => {
    const posted: string[] = [];
    const replica = await db.another();
    const digests = [
      digestOf(db.store, A, 'a1', posted, 'A'),
      digestOf(replica, A, 'a2', posted, 'A'),
      digestOf(db.store, B, 'b1', posted, 'B'),
      digestOf(replica, SINGLE_WORKSPACE, 's1', posted, 'one'),
    ];
    try {
      const outcomes = await Promise.all(digests.map((d) => d.runFor(MONDAY)));
      const key = digestPeriod(MONDAY, 'UTC').key;
      expect(posted.sort()).toEqual([`A:${key}`, `B:${key}`, `one:${key}`]);
      expect(outcomes.filter((o) => o === 'posted')).toHaveLength(3);
      // Run again (a restart, a late replica): nothing more.
      for (const d of digests) expect(await d.runFor(MONDAY)).toBe('skipped');
      expect(posted).toHaveLength(3);
    } finally {
      for (const d of digests) d.stop();
    }
  });

  it("reads the connected workspaces' digest settings, and no others", async () => {
    const connect = (teamId: string) =>
      db.store.connectDocs(
        { teamId },
        {
          projectId: `proj_${teamId}`,
          sealedKey: 'sealed',
          keyId: 'k1',
          connectedBy: 'U1',
          now: 1,
        },
      );
    await connect('T0A');
    await connect('T0B');
    await db.store.updateWorkspaceSettings(
      { teamId: 'T0A' },
      { digestChannel: 'C0A1', digestCron: '0 8 * * 2', timeZone: 'Europe/Paris' },
      2,
    );
    // Settings without a connection, and a connection without a digest channel: none.
    await db.store.updateWorkspaceSettings({ teamId: 'T0C' }, { digestChannel: 'C0C1' }, 2);
    await db.store.updateWorkspaceSettings({ teamId: 'T0B' }, { timeZone: 'UTC' }, 2);
    const reader = createDocsReader(db.store);
    expect(await reader.digests()).toEqual([
      {
        ws: { teamId: 'T0A', enterpriseId: null },
        projectId: 'proj_T0A',
        channelId: 'C0A1',
        cron: '0 8 * * 2',
        timeZone: 'Europe/Paris',
      },
    ]);
    await db.store.disconnectDocs({ teamId: 'T0A' }, 3);
    expect(await reader.digests()).toEqual([]);
  });
});

describe('digests: following the workspaces', () => {
  const plan = (ws: WorkspaceRef, over: Partial<WorkspaceDigestPlan> = {}) => ({
    ws,
    projectId: `proj_${ws.teamId}`,
    channelId: 'C1',
    cron: '0 9 * * 1',
    timeZone: 'UTC',
    ...over,
  });

  it('starts, restarts on a change and stops digests as the settings say; a bad one is left out', async () => {
    let plans: WorkspaceDigestPlan[] = [plan(A), plan(B, { cron: 'not a cron' })];
    const log: string[] = [];
    const logs = memoryLogger();
    const digests = startWorkspaceDigests({
      plans: async () => plans,
      start: (p) => {
        if (p.cron === 'not a cron') throw new Error('bad cron');
        log.push(`start ${p.ws.teamId} ${p.channelId}`);
        return () => log.push(`stop ${p.ws.teamId} ${p.channelId}`);
      },
      log: logs.log,
      everyMs: 3_600_000,
    });
    try {
      await digests.sync();
      expect(digests.running()).toEqual(['T0A']);
      expect(logs.text()).toContain('digests.workspace_not_started');
      plans = [plan(A, { channelId: 'C2' }), plan(B)];
      await digests.sync();
      expect(digests.running().sort()).toEqual(['T0A', 'T0B']);
      await digests.sync(); // unchanged: left running
      plans = [plan(B)];
      await digests.sync();
      expect(digests.running()).toEqual(['T0B']);
      expect(log).toEqual([
        'start T0A C1',
        'stop T0A C1',
        'start T0A C2',
        'start T0B C1',
        'stop T0A C2',
      ]);
    } finally {
      digests.stop();
    }
    expect(log.at(-1)).toBe('stop T0B C1');
  });
});
