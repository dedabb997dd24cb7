import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { Keyring } from '../../src/sealed.ts';
import type { Store } from '../../src/store/types.ts';
import { createVault } from '../../src/workspaces/vault.ts';
import { runScript } from '../helpers/process.ts';
import {
  databaseUrl,
  engineKinds,
  freshDatabaseEachTest,
  openStore,
} from '../helpers/store-engines.ts';
import { SECRETS, teamInstallation } from './fixtures.ts';

const keyring = new Keyring([{ id: 'k1', key: randomBytes(32) }]);

/** `npm run forget` as the operator runs it: its own process, the environment only. */
const forgetCommand = (url: string, args: string[]) =>
  runScript('scripts/forget.ts', args, { DATABASE_URL: url });

/** An installed, connected workspace with a job and a channel's project. */
async function inUse(store: Store, teamId: string) {
  const vault = createVault(store, keyring, { retentionDays: 30 });
  await vault.saveInstallation(teamInstallation(teamId));
  await vault.connectDocs(
    { teamId },
    { projectId: 'p', apiKey: SECRETS.docsKey, connectedBy: 'U1' },
  );
  await store.createThread(
    { teamId, channelId: 'C1', threadTs: '1.1', userId: 'U1', prompt: 'Add a page' },
    1,
  );
  await store.bindChannelProject({
    teamId,
    channelId: 'C1',
    projectId: 'p',
    setBy: 'U1',
    setAt: 1,
  });
}

const freshDatabase = freshDatabaseEachTest();

describe.each(engineKinds)('npm run forget (%s)', (kind) => {
  it('counts without --yes; with it, deletes the workspace now and no other', async () => {
    const db = await freshDatabase(kind);
    const url = databaseUrl(db);
    let store = await openStore(db, 2);
    await inUse(store, 'T0001');
    await inUse(store, 'T0002');
    await store.close();

    const dry = await forgetCommand(url, ['T0001']);
    expect(dry.code).toBe(0);
    expect(dry.output).toContain('T0001 holds: outbox 0, follow_ups 0, job_threads 1');
    expect(dry.output).toContain('Nothing deleted.');

    const done = await forgetCommand(url, ['T0001', '--yes']);
    expect(done.output).toContain(
      'T0001: 1 installation(s) and 1 docs connection(s) deleted, 0 job(s) unwatched; 1 forget(s) settled.',
    );
    expect(done.output).toContain(
      'after:  outbox 0, follow_ups 0, job_threads 0, pending_commands 0, channel_projects 0, docs_connections 0',
    );
    expect(done.output).toContain('"msg":"workspace.forgotten"');
    expect(done.output).not.toContain(SECRETS.docsKey);
    expect(done.code).toBe(0);

    store = await openStore(db, 2);
    try {
      expect(await store.findInstallation({ teamId: 'T0001' })).toBeUndefined();
      expect(await store.pendingForget({ teamId: 'T0001' })).toBeUndefined();
      expect(await store.workspaceRows({ teamId: 'T0002' })).toMatchObject({
        job_threads: 1,
        channel_projects: 1,
        docs_connections: 1,
      });
      expect(await store.findInstallation({ teamId: 'T0002' })).toBeDefined();
    } finally {
      await store.close();
    }
  });

  it('forgets now a workspace uninstalled earlier, whose forget was due later', async () => {
    const db = await freshDatabase(kind);
    const url = databaseUrl(db);
    const store = await openStore(db, 2);
    await inUse(store, 'T0003');
    await store.markUninstalled({ teamId: 'T0003' }, 1, Date.now() + 30 * 86_400_000);
    await store.close();
    const done = await forgetCommand(url, ['T0003', '--yes']);
    expect(done.output).toContain('after:  outbox 0, follow_ups 0, job_threads 0');
    expect(done.code).toBe(0);
  });

  it('refuses anything but Slack ids, with the usage', async () => {
    const db = await freshDatabase(kind);
    const url = databaseUrl(db);
    for (const args of [[], ['acme'], ['T0001', 'T0002'], ['--enterprise', 'x']]) {
      const r = await forgetCommand(url, args);
      expect(r.code).toBe(1);
      expect(r.output).toContain('usage: npm run forget -- <team id>');
    }
  });
});
