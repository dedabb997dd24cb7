/**
 * Distributed mode, the retention sweep: UNINSTALL_RETENTION_DAYS after an uninstall, the
 * workspace's other data (jobs, their announcements, acked commands, channel projects, its
 * docs row) is deleted and every other workspace's kept; a workspace installed again before
 * then keeps its data. The real bot over HTTP, uninstalled and installed again through the
 * fake Slack, on both engines.
 */
import { describe, expect, it } from 'vitest';
import type { Store } from '../../src/store/types.ts';
import { createForgetSweep } from '../../src/workspaces/forget.ts';
import {
  ALPHA,
  activeJob,
  BETA,
  closeAfterEach,
  connectDocs,
  deliver,
  install,
  startDistributed,
} from '../helpers/distributed.ts';
import type { Harness } from '../helpers/harness.ts';
import { memoryLogger } from '../helpers/log.ts';
import { eventually } from '../helpers/net.ts';
import { engineKinds } from '../helpers/store-engines.ts';

const DAY_MS = 86_400_000;

let h: Harness;
closeAfterEach(() => h, 30);

async function start(
  engine: 'sqlite' | 'postgres',
  env: Record<string, string>,
  forgetSweepMs?: number,
): Promise<Store> {
  h = await startDistributed(engine, {
    env,
    start: forgetSweepMs === undefined ? {} : { forgetSweepMs },
  });
  if (!h.botStore) throw new Error('no store');
  return h.botStore;
}

/** A workspace in use: installed, connected, a job watched and a channel bound to a project. */
async function inUse(store: Store, ws: typeof ALPHA | typeof BETA, user: string) {
  await install(h, { team: ws.team, user });
  await connectDocs(
    h,
    { team: ws.team, user },
    `proj_${ws.team}`,
    `mint_${ws.team}_key_0123456789`,
  );
  const channelId = ws.channels[0] ?? 'C0';
  await store.bindChannelProject({
    teamId: ws.team,
    channelId,
    projectId: `proj_${ws.team}`,
    setBy: user,
    setAt: Date.now(),
  });
  const job = await activeJob(store, ws.team, channelId);
  return { job, channelId };
}

const forgotten = () => h.logLines().filter((l) => l.msg === 'workspace.forgotten');
const uninstalled = () => h.logLines().filter((l) => l.msg === 'workspace.uninstalled');

describe.each(engineKinds)('distributed mode: the retention sweep (%s)', (engine) => {
  it("forgets an uninstalled workspace's data once UNINSTALL_RETENTION_DAYS (0 here) have passed, and no other's", async () => {
    const store = await start(engine, { UNINSTALL_RETENTION_DAYS: '0' }, 100);
    const a = await inUse(store, ALPHA, 'U0A1');
    const b = await inUse(store, BETA, 'U0B1');

    expect(await deliver(h, h.slack.uninstall({ team: ALPHA.team }))).toEqual([200, 200]);
    // Slack's two events may each record the uninstall, the second after the first's forget.
    await eventually(
      async () =>
        uninstalled().length === 2 && (await store.pendingForget({ teamId: 'T0A' })) === undefined,
      'the forget',
    );
    const rows = (table: string) =>
      forgotten().reduce((n, l) => n + Number((l.rows as Record<string, number>)[table]), 0);
    expect(forgotten().every((l) => l.teamId === 'T0A')).toBe(true);
    expect([rows('job_threads'), rows('channel_projects')]).toEqual([1, 1]);
    expect(await store.getThread(a.job.id)).toBeUndefined();
    expect(await store.channelProject('T0A', a.channelId)).toBeUndefined();
    // Beta: all there.
    expect(await store.getThread(b.job.id)).toMatchObject({ teamId: 'T0B' });
    expect(await store.channelProject('T0B', b.channelId)).toMatchObject({ projectId: 'proj_T0B' });
    expect((await store.getDocsConnection({ teamId: 'T0B' }))?.connection).toMatchObject({
      projectId: 'proj_T0B',
    });
    expect(await store.findInstallation({ teamId: 'T0B' })).toBeDefined();
    // Nothing secret in the line: ids and counts.
    expect(JSON.stringify(forgotten()[0])).not.toMatch(/xox|mint_/);
  });

  it('keeps the data of a workspace installed again before the deadline, and forgets one that was not', async () => {
    const store = await start(engine, {});
    const a = await inUse(store, ALPHA, 'U0A1');
    const b = await inUse(store, BETA, 'U0B1');
    expect(await deliver(h, h.slack.uninstall({ team: ALPHA.team }))).toEqual([200, 200]);
    expect(await deliver(h, h.slack.uninstall({ team: BETA.team }))).toEqual([200, 200]);
    await eventually(() => uninstalled().length === 4, 'the uninstalls');
    // The sweep as a replica would run it, 29 and then 31 days on (UNINSTALL_RETENTION_DAYS=30).
    const mem = memoryLogger();
    const sweepAt = (days: number) =>
      createForgetSweep(
        { store, log: mem.log, now: () => Date.now() + days * DAY_MS },
        { leaseMs: 2_000 },
      ).pass();

    expect(await sweepAt(29)).toBe(0);
    expect(await store.getThread(a.job.id)).toBeDefined();
    expect(await store.getThread(b.job.id)).toBeDefined();

    expect((await install(h, { team: ALPHA.team, user: 'U0A2' })).status).toBe(200);
    expect(await sweepAt(31)).toBe(1);
    expect(await store.getThread(a.job.id)).toMatchObject({ teamId: 'T0A' });
    expect(await store.channelProject('T0A', a.channelId)).toMatchObject({
      projectId: 'proj_T0A',
    });
    expect(await store.getThread(b.job.id)).toBeUndefined();
    expect(await store.channelProject('T0B', b.channelId)).toBeUndefined();
    expect(
      mem
        .lines()
        .filter((l) => l.msg === 'workspace.forgotten')
        .map((l) => l.teamId),
    ).toEqual(['T0B']);
  });
});
