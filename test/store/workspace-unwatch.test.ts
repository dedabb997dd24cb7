import { expect, it } from 'vitest';
import type { Store } from '../../src/store/types.ts';
import { UNINSTALLED_WATCHER } from '../../src/store/workspace-records.ts';
import { describeEachEngine } from '../helpers/store-engines.ts';
import { snap, thread } from './fixtures.ts';

/** An active, watched job in a team's channel; `status` 'completed' for one that ended. */
async function job(
  store: Store,
  teamId: string,
  ts: string,
  status: 'active' | 'completed' = 'active',
) {
  const t = await store.createThread({ ...thread, teamId, threadTs: ts }, 1);
  await store.attachJob(
    t.id,
    snap({ jobId: `job_${ts}`, status }),
    { nextPollAt: 50, pollIntervalMs: 5 },
    2,
  );
  return t.id;
}

const sealedDocs = { projectId: 'p', sealedKey: 'sealed', keyId: 'k1', connectedBy: 'U1', now: 3 };
const ownInstall = {
  isEnterpriseInstall: false,
  installerUserId: 'U1',
  botUserId: 'B1',
  sealed: 'sealed',
  keyId: 'k1',
  now: 3,
};

describeEachEngine('store: an uninstalled workspace stops being watched', (db) => {
  it("stops a team's active jobs, and no one else's", async () => {
    const mine = await job(db.store, 'T1', '1.1');
    const ended = await job(db.store, 'T1', '1.2', 'completed');
    const other = await job(db.store, 'T2', '2.1');
    expect(await db.store.stopWatchingWorkspace({ teamId: 'T1' }, 10)).toBe(1);
    expect(await db.store.getThread(mine)).toMatchObject({
      unwatchedBy: UNINSTALLED_WATCHER,
      nextPollAt: null,
      updatedAt: 10,
    });
    expect(await db.store.getThread(ended)).toMatchObject({ unwatchedBy: null });
    expect(await db.store.getThread(other)).toMatchObject({ unwatchedBy: null, nextPollAt: 50 });
    // Once: a second uninstall event finds nothing left to stop.
    expect(await db.store.stopWatchingWorkspace({ teamId: 'T1' }, 11)).toBe(0);
  });

  it("an org: the teams its install served (a docs row, no install of their own), not the others'", async () => {
    await db.store.connectDocs({ enterpriseId: 'E1', teamId: 'T1' }, sealedDocs);
    await db.store.connectDocs({ enterpriseId: 'E1', teamId: 'T2' }, sealedDocs);
    await db.store.connectDocs({ enterpriseId: 'E2', teamId: 'T3' }, sealedDocs);
    await db.store.saveInstallation({ ...ownInstall, enterpriseId: 'E1', teamId: 'T2' });
    const served = await job(db.store, 'T1', '1.1');
    const ownInstallJob = await job(db.store, 'T2', '2.1');
    const otherOrg = await job(db.store, 'T3', '3.1');
    expect(await db.store.stopWatchingWorkspace({ enterpriseId: 'E1' }, 10)).toBe(1);
    expect(await db.store.getThread(served)).toMatchObject({ unwatchedBy: UNINSTALLED_WATCHER });
    expect(await db.store.getThread(ownInstallJob)).toMatchObject({ unwatchedBy: null });
    expect(await db.store.getThread(otherOrg)).toMatchObject({ unwatchedBy: null });
  });
});
