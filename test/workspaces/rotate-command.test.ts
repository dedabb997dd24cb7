import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { Keyring } from '../../src/sealed.ts';
import { verifyKeys } from '../../src/workspaces/key-check.ts';
import { createVault } from '../../src/workspaces/vault.ts';
import { runScript } from '../helpers/process.ts';
import {
  databaseUrl,
  engineKinds,
  freshDatabaseEachTest,
  openStore,
} from '../helpers/store-engines.ts';
import { SECRETS, teamInstallation } from './fixtures.ts';

const k1 = randomBytes(32).toString('base64');
const k2 = randomBytes(32).toString('base64');

/** `npm run rotate-keys` as the operator runs it: its own process, the environment only. */
const rotateCommand = (url: string, keys: string) =>
  runScript('scripts/rotate-keys.ts', [], { DATABASE_URL: url, ENCRYPTION_KEYS: keys });

const freshDatabase = freshDatabaseEachTest();

describe.each(engineKinds)('npm run rotate-keys (%s)', (kind) => {
  it('re-seals with the first key, prints counts by key, and is a no-op the second time', async () => {
    const db = await freshDatabase(kind);
    const url = databaseUrl(db);
    let store = await openStore(db, 2);
    const old = new Keyring([{ id: 'k1', key: Buffer.from(k1, 'base64') }]);
    const vault = createVault(store, old, { retentionDays: 30 });
    for (const teamId of ['T1', 'T2']) await vault.saveInstallation(teamInstallation(teamId));
    await vault.connectDocs(
      { teamId: 'T1' },
      { projectId: 'p', apiKey: SECRETS.docsKey, connectedBy: 'U1' },
    );
    await store.close();

    const first = await rotateCommand(url, `k2:${k2},k1:${k1}`);
    expect(first.output).toContain("Re-sealing every stored secret with key 'k2'");
    expect(first.output).toContain("before: docs_key 'k1': 1, installation 'k1': 2");
    expect(first.output).toContain("after:  docs_key 'k2': 1, installation 'k2': 2");
    expect(first.output).toContain('3 value(s) re-sealed.');
    expect(first.output).toContain("No stored value needs 'k1' any more");
    expect(first.code).toBe(0);
    for (const secret of [k1, k2]) expect(first.output).not.toContain(secret);

    const again = await rotateCommand(url, `k2:${k2},k1:${k1}`);
    expect(again.output).toContain('0 value(s) re-sealed.');
    expect(again.code).toBe(0);

    // k1 removed: the start-up check passes and everything opens.
    const only2 = new Keyring([{ id: 'k2', key: Buffer.from(k2, 'base64') }]);
    store = await openStore(db, 2);
    try {
      await verifyKeys(store, only2);
      const v = createVault(store, only2, { retentionDays: 30 });
      const found = await v.findInstallation({ teamId: 'T2' });
      expect((found!.body as { bot: { token: string } }).bot.token).toBe(SECRETS.botToken);
      expect((await v.getDocsConnection({ teamId: 'T1' })).connection?.openKey()).toBe(
        SECRETS.docsKey,
      );
    } finally {
      await store.close();
    }
  });

  it('stops with one line when a key is missing or ENCRYPTION_KEYS is bad, naming no key', async () => {
    const db = await freshDatabase(kind);
    const url = databaseUrl(db);
    const store = await openStore(db, 2);
    const old = new Keyring([{ id: 'k1', key: Buffer.from(k1, 'base64') }]);
    await createVault(store, old, { retentionDays: 30 }).saveInstallation(teamInstallation('T1'));
    await store.close();

    const missing = await rotateCommand(url, `k2:${k2}`);
    expect(missing.code).toBe(1);
    expect(missing.output).toContain(
      "✗ ENCRYPTION_KEYS has no key 'k1' that sealed stored secrets",
    );
    const bad = await rotateCommand(url, `k2:${k2.slice(4)}`);
    expect(bad.code).toBe(1);
    expect(bad.output).toMatch(/^✗ Configuration: ENCRYPTION_KEYS key 'k2' \(entry 1 of 1\)/);
    const unset = await rotateCommand(url, '');
    expect(unset.code).toBe(1);
    expect(unset.output).toContain('ENCRYPTION_KEYS is required');
    for (const r of [missing, bad, unset])
      for (const secret of [k1, k2, k2.slice(4)]) expect(r.output).not.toContain(secret);
  });
});
