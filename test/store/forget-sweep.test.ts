import { expect, it } from 'vitest';
import { FORGOTTEN_TABLES } from '../../src/store/forget-sweep.ts';
import type { Store, WorkspaceKey } from '../../src/store/types.ts';
import { createForgetSweep, type ForgetSweepOptions } from '../../src/workspaces/forget.ts';
import { memoryLogger } from '../helpers/log.ts';
import { describeEachEngine } from '../helpers/store-engines.ts';
import { poll, snap, thread } from './fixtures.ts';

/**
 * The retention sweep (src/workspaces/forget.ts over src/store/forget-sweep.ts): an
 * uninstalled workspace's data is deleted once its forget is due, in batches under a lease
 * on the forget, and nothing before, nothing of another workspace, nothing once the
 * workspace is installed again. Both engines.
 */

const LEASE = 1_000;
/** A chart point's range key (src/reports/points.ts). */
const POINT = 'proj|2026-11-01|2026-11-02';
const SETTINGS = { digestChannel: 'C123' };

/** Everything a workspace's use leaves: jobs with announcements and a follow-up, a command, a channel's project, its docs row. */
async function seed(store: Store, ws: { teamId: string; enterpriseId?: string }, tag: string) {
  const base = { ...thread, ...ws, channelId: `C_${tag}` };
  for (const n of [1, 2, 3]) {
    const ts = `${n}.${tag.length}`;
    const t = await store.createThread({ ...base, threadTs: `${tag}${ts}` }, 1);
    const jobId = `job_${tag}_${n}`;
    await store.attachJob(t.id, snap({ jobId }), { nextPollAt: 5, pollIntervalMs: 5 }, 2);
    await store.recordPoll(
      poll({
        threadId: t.id,
        snapshot: snap({ jobId, status: 'completed', prLink: 'https://x/pull/1' }),
        announcements: [{ key: `done:${tag}:${n}`, kind: 'completed', prLink: 'https://x/pull/1' }],
        now: 3,
      }),
    );
    if (n === 1)
      await store.recordFollowUp(
        { threadId: t.id, replyKey: `r:${tag}`, replyTs: '9.9', userId: 'U1', text: 'and more' },
        [`ev:${tag}`],
        4,
      );
  }
  await store.recordPendingCommands(
    [
      {
        ...ws,
        channelId: base.channelId,
        userId: 'U1',
        text: 'a page',
        responseUrl: `https://r/${tag}`,
      },
    ],
    { owner: 'gone', until: 5 },
    1,
  );
  await store.bindChannelProject({
    teamId: ws.teamId,
    channelId: base.channelId,
    projectId: `proj_${tag}`,
    setBy: 'U1',
    setAt: 1,
  });
  await store.updateWorkspaceSettings(ws, SETTINGS, 1);
  // The bot's own state of the workspace: a cached report, the headline, a vector, a gap, a digest claim, a chart point.
  await store.cacheReport(ws, 'insights:k', '{}', 1e12, 1);
  await store.putReportHeadline(ws, {
    from: '2026-11-01',
    to: '2026-11-08',
    timeZone: 'UTC',
    totals: { human: 1, ai: 0, total: 1 },
    previousTotals: { human: 1, ai: 0, total: 1 },
    partial: false,
    generatedAt: 1,
  });
  await store.putTextVectors(ws, 'm', [{ hash: 'h', vector: 'AAAA' }], 1, 0);
  const gap = { projectId: `proj_${tag}`, key: 'k', kind: 'question', signatures: ['k'] };
  await store.addGaps(ws, [{ ...gap, title: 't', evidence: '{}', evidenceTo: '' }], 1);
  await store.claimDigest(ws, 'C1', '2026-W47', 'o', 1, 1_000);
  await store.putVisitorPoint(ws, POINT, { human: 1, ai: 0, total: 1 }, 1);
}

/** What `seed` leaves of one workspace. */
const SEEDED = {
  outbox: 3,
  follow_ups: 1,
  job_threads: 3,
  pending_commands: 1,
  channel_projects: 1,
  docs_connections: 1,
  report_cache: 1,
  report_headlines: 1,
  text_vectors: 1,
  insight_gaps: 1,
  digest_runs: 1,
  visitor_points: 1,
};
const NOTHING = Object.fromEntries(FORGOTTEN_TABLES.map((t) => [t, 0]));

function sweepOn(store: Store, at: { now: number }, opts: Partial<ForgetSweepOptions> = {}) {
  const mem = memoryLogger();
  const sweep = createForgetSweep(
    { store, log: mem.log, now: () => at.now },
    { leaseMs: LEASE, batchSize: 2, ...opts },
  );
  const lines = (msg: string) => mem.lines().filter((l) => l.msg === msg);
  return { sweep, lines };
}

/** The uninstall as the vault records it: installs and docs row gone, the forget due at `forgetAt`. */
const uninstall = (store: Store, ws: WorkspaceKey, forgetAt: number) =>
  store.markUninstalled(ws, 10, forgetAt);

describeEachEngine('store: the retention sweep', (db) => {
  it("deletes an uninstalled workspace's rows once its forget is due, not before, and no other workspace's", async () => {
    await seed(db.store, { teamId: 'T0A' }, 'a');
    await seed(db.store, { teamId: 'T0B' }, 'b');
    await uninstall(db.store, { teamId: 'T0A' }, 1_000);
    // A settings row written after the uninstall (a form in flight) is the workspace's too.
    await db.store.updateWorkspaceSettings({ teamId: 'T0A' }, SETTINGS, 11);
    expect(await db.store.workspaceRows({ teamId: 'T0A' })).toEqual(SEEDED);
    const at = { now: 999 };
    const { sweep, lines } = sweepOn(db.store, at);

    expect(await sweep.pass()).toBe(0);
    expect(await db.store.workspaceRows({ teamId: 'T0A' })).toEqual(SEEDED);

    at.now = 1_000;
    expect(await sweep.pass()).toBe(1);
    expect(await db.store.workspaceRows({ teamId: 'T0A' })).toEqual(NOTHING);
    expect(await db.store.workspaceRows({ teamId: 'T0B' })).toEqual(SEEDED);
    // Read back as the bot reads them: A's chart point is gone, B's is there.
    expect(await db.store.getVisitorPoint({ teamId: 'T0A' }, POINT)).toBeUndefined();
    expect(await db.store.getVisitorPoint({ teamId: 'T0B' }, POINT)).toMatchObject({ total: 1 });
    expect(await db.store.pendingForget({ teamId: 'T0A' })).toBeUndefined();
    const [line, ...more] = lines('workspace.forgotten');
    expect(more).toEqual([]);
    expect(line).toMatchObject({
      component: 'forget',
      teamId: 'T0A',
      enterpriseId: null,
      uninstalledAt: new Date(10).toISOString(),
      rows: SEEDED,
    });
    // Done once: a second pass finds nothing due.
    expect(await sweep.pass()).toBe(0);
    expect(lines('workspace.forgotten')).toHaveLength(1);
  });

  it('keeps the data of a workspace installed again before the deadline', async () => {
    await seed(db.store, { teamId: 'T0A' }, 'a');
    await uninstall(db.store, { teamId: 'T0A' }, 1_000);
    // What the installation store does on a re-install (src/slack/installation-store.ts).
    expect(await db.store.clearUninstalled({ teamId: 'T0A' })).toBe(true);
    const { sweep, lines } = sweepOn(db.store, { now: 5_000 });
    expect(await sweep.pass()).toBe(0);
    expect(await db.store.workspaceRows({ teamId: 'T0A' })).toMatchObject({ job_threads: 3 });
    expect(lines('workspace.forgotten')).toEqual([]);
  });

  it("cancels the forget of a team its org's org-wide install serves again", async () => {
    const east = { teamId: 'T0G1', enterpriseId: 'E0G' };
    await seed(db.store, east, 'e');
    await uninstall(db.store, east, 1_000);
    await db.store.saveInstallation({
      enterpriseId: 'E0G',
      teamId: null,
      isEnterpriseInstall: true,
      installerUserId: 'W0',
      botUserId: 'UB',
      sealed: 'sealed',
      keyId: 'k1',
      now: 20,
    });
    const { sweep, lines } = sweepOn(db.store, { now: 5_000 });
    expect(await sweep.pass()).toBe(1);
    expect(await db.store.workspaceRows(east)).toMatchObject({ job_threads: 3 });
    expect(await db.store.pendingForget(east)).toBeUndefined();
    expect(lines('workspace.forget_cancelled')).toMatchObject([
      { teamId: 'T0G1', enterpriseId: 'E0G', reason: 'installed' },
    ]);
  });

  it("an org's forget reaches the teams its install served, not one with an install of its own", async () => {
    const west = { teamId: 'T0G2', enterpriseId: 'E0G' };
    const east = { teamId: 'T0G1', enterpriseId: 'E0G' };
    await seed(db.store, west, 'w');
    await seed(db.store, east, 'e');
    await db.store.saveInstallation({
      enterpriseId: 'E0G',
      teamId: 'T0G1',
      isEnterpriseInstall: false,
      installerUserId: 'W0',
      botUserId: 'UB',
      sealed: 'sealed',
      keyId: 'k1',
      now: 20,
    });
    await uninstall(db.store, { enterpriseId: 'E0G' }, 1_000);
    // The uninstall deleted West's docs row (the org served it); East keeps its own.
    const { sweep, lines } = sweepOn(db.store, { now: 1_000 });
    expect(await sweep.pass()).toBe(1);
    expect(await sweep.pass()).toBe(1);
    expect(await sweep.pass()).toBe(0);
    expect(await db.store.workspaceRows(west)).toEqual(NOTHING);
    expect(await db.store.workspaceRows(east)).toEqual(SEEDED);
    expect(lines('workspace.forgotten')).toMatchObject([
      { teamId: null, enterpriseId: 'E0G', teams: 1 },
      {
        teamId: 'T0G2',
        enterpriseId: 'E0G',
        rows: { ...SEEDED, docs_connections: 0 },
      },
    ]);
  });

  it('two replicas sweeping at once forget a workspace once, with one line', async () => {
    await seed(db.store, { teamId: 'T0A' }, 'a');
    await seed(db.store, { teamId: 'T0B' }, 'b');
    await uninstall(db.store, { teamId: 'T0A' }, 1_000);
    await uninstall(db.store, { teamId: 'T0B' }, 1_000);
    const at = { now: 2_000 };
    const one = sweepOn(db.store, at, { batchSize: 1 });
    const two = sweepOn(await db.another(), at, { batchSize: 1 });
    const settled = await Promise.all([one.sweep.pass(), two.sweep.pass()]);
    expect(settled[0] + settled[1]).toBe(2);
    const forgotten = [
      ...one.lines('workspace.forgotten'),
      ...two.lines('workspace.forgotten'),
    ].map((l) => [l.teamId, l.rows]);
    // Their docs rows went at the uninstall.
    const rows = { ...SEEDED, docs_connections: 0 };
    expect(forgotten.sort()).toEqual([
      ['T0A', rows],
      ['T0B', rows],
    ]);
    for (const teamId of ['T0A', 'T0B'])
      expect(await db.store.workspaceRows({ teamId })).toEqual(NOTHING);
  });

  it('a batch holds the lease or does nothing: a re-install or a lease run out stops the forget', async () => {
    await seed(db.store, { teamId: 'T0A' }, 'a');
    await uninstall(db.store, { teamId: 'T0A' }, 1_000);
    const [due] = await db.store.dueForgets(1_000, 1);
    if (!due) throw new Error('no forget due');
    expect(await db.store.claimForget(due, 2_000)).toBe(true);
    // Taken: not due for anyone else until the lease runs out.
    expect(await db.store.dueForgets(1_999, 5)).toEqual([]);
    expect(await db.store.claimForget(due, 3_000)).toBe(false);
    const step = await db.store.forgetBatch({ ...due, held: 2_000 }, 2_500, 2);
    expect(step).toEqual({ state: 'deleted', table: 'outbox', rows: 2 });
    // A replica holding an old lease does nothing.
    expect(await db.store.forgetBatch({ ...due, held: 2_000 }, 9_000, 2)).toEqual({
      state: 'lost',
    });
    expect(await db.store.clearUninstalled({ teamId: 'T0A' })).toBe(true);
    expect(await db.store.forgetBatch({ ...due, held: 2_500 }, 3_000, 2)).toEqual({
      state: 'lost',
    });
    expect(await db.store.workspaceRows({ teamId: 'T0A' })).toEqual({
      ...SEEDED,
      outbox: 1,
      docs_connections: 0,
    });
  });

  it('stopping leaves a forget at the end of a batch; a later pass takes it up once the lease has run out', async () => {
    await seed(db.store, { teamId: 'T0A' }, 'a');
    await uninstall(db.store, { teamId: 'T0A' }, 1_000);
    const at = { now: 1_000 };
    let batches = 0;
    const stopping = sweepOn(db.store, at, { running: () => batches++ < 2 });
    expect(await stopping.sweep.pass()).toBe(0);
    expect(stopping.lines('workspace.forget_paused')).toMatchObject([
      { teamId: 'T0A', rows: { outbox: 2 } },
    ]);
    const later = sweepOn(db.store, at);
    expect(await later.sweep.pass()).toBe(0);
    at.now += LEASE;
    expect(await later.sweep.pass()).toBe(1);
    expect(await db.store.workspaceRows({ teamId: 'T0A' })).toEqual(NOTHING);
  });
});
