import { randomBytes } from 'node:crypto';
import { expect, it } from 'vitest';
import { Keyring } from '../../src/sealed.ts';
import type { Store } from '../../src/store/types.ts';
import { KeyCheckError, verifyKeys } from '../../src/workspaces/key-check.ts';
import { rotateKeys } from '../../src/workspaces/rotate.ts';
import { createVault } from '../../src/workspaces/vault.ts';
import { describeEachEngine } from '../helpers/store-engines.ts';
import { SECRETS, teamInstallation } from './fixtures.ts';

const key1 = { id: 'k1', key: randomBytes(32) };
const key2 = { id: 'k2', key: randomBytes(32) };
const ring = (...keys: { id: string; key: Buffer }[]) => new Keyring(keys);

const failure = (p: Promise<unknown>) =>
  p.then(
    () => 'started',
    (err: unknown) => (err instanceof KeyCheckError ? err.message : `other: ${String(err)}`),
  );

/** Two workspaces with installations and docs keys, and an org-wide install, sealed by `keyring`. */
async function fill(store: Store, keyring: Keyring) {
  const v = createVault(store, keyring, { retentionDays: 30 });
  for (const teamId of ['T1', 'T2']) {
    await v.saveInstallation(teamInstallation(teamId));
    await v.connectDocs(
      { teamId },
      { projectId: `p_${teamId}`, apiKey: `${SECRETS.docsKey}${teamId}`, connectedBy: 'U1' },
    );
  }
  await v.saveInstallation({
    ...teamInstallation('T3', 'E1'),
    isEnterpriseInstall: true,
    teamId: null,
  });
}

/** Every stored secret opens with `keyring` and is what was stored. */
async function expectAllOpen(store: Store, keyring: Keyring) {
  const v = createVault(store, keyring, { retentionDays: 30 });
  for (const teamId of ['T1', 'T2']) {
    const found = await v.findInstallation({ teamId });
    expect((found!.body as { bot: { token: string } }).bot.token).toBe(SECRETS.botToken);
    const docs = await v.getDocsConnection({ teamId });
    expect(docs.connection?.openKey()).toBe(`${SECRETS.docsKey}${teamId}`);
  }
  const org = await v.findInstallation({ enterpriseId: 'E1', isEnterpriseInstall: true });
  expect((org!.body as { bot: { refreshToken: string } }).bot.refreshToken).toBe(
    SECRETS.refreshToken,
  );
}

describeEachEngine('keys: the start-up check', (db) => {
  it('passes with nothing stored, keys or not', async () => {
    await expect(verifyKeys(db.store, undefined)).resolves.toBeUndefined();
    await expect(verifyKeys(db.store, ring(key1))).resolves.toBeUndefined();
  });

  it('passes with the keys that sealed the stored secrets, in any order, with extra keys', async () => {
    await fill(db.store, ring(key1));
    await expect(verifyKeys(db.store, ring(key1))).resolves.toBeUndefined();
    await expect(verifyKeys(db.store, ring(key2, key1))).resolves.toBeUndefined();
  });

  it('refuses to start when ENCRYPTION_KEYS is unset but secrets are stored', async () => {
    await fill(db.store, ring(key1));
    expect(await failure(verifyKeys(db.store, undefined))).toBe(
      "ENCRYPTION_KEYS is unset, but the database holds secrets sealed with key 'k1': set it to the keys that sealed them",
    );
  });

  it('refuses to start without the key that sealed stored secrets', async () => {
    await fill(db.store, ring(key1));
    expect(await failure(verifyKeys(db.store, ring(key2)))).toBe(
      "ENCRYPTION_KEYS has no key 'k1' that sealed stored secrets",
    );
  });

  it('refuses to start with a wrong key under the right id, naming no key', async () => {
    await fill(db.store, ring(key1));
    const wrong = { id: 'k1', key: randomBytes(32) };
    const message = await failure(verifyKeys(db.store, ring(wrong)));
    expect(message).toBe(
      "ENCRYPTION_KEYS key 'k1' does not open the stored check value (wrong key?)",
    );
    // Also when the wrong key is only kept to open old values, and the first is right.
    expect(await failure(verifyKeys(db.store, ring(key2, { id: 'k1', key: wrong.key })))).toBe(
      message,
    );
    for (const k of [key1, wrong]) expect(message).not.toContain(k.key.toString('base64'));
  });

  it('seals nothing with a key whose id holds another key check value', async () => {
    await fill(db.store, ring(key1));
    const impostor = createVault(db.store, ring({ id: 'k1', key: randomBytes(32) }), {
      retentionDays: 30,
    });
    expect(await failure(impostor.saveInstallation(teamInstallation('T9')))).toBe(
      "ENCRYPTION_KEYS key 'k1' does not open the stored check value (wrong key?)",
    );
    expect(await db.store.findInstallation({ teamId: 'T9' })).toBeUndefined();
  });
});

describeEachEngine('keys: rotation', (db) => {
  it('re-seals everything with k2; k1 can then be removed and everything opens', async () => {
    await fill(db.store, ring(key1));
    const report = await rotateKeys(db.store, ring(key2, key1), { batchSize: 2 });
    expect(report.before).toEqual([
      { kind: 'docs_key', keyId: 'k1', count: 2 },
      { kind: 'installation', keyId: 'k1', count: 3 },
    ]);
    expect(report.after).toEqual([
      { kind: 'docs_key', keyId: 'k2', count: 2 },
      { kind: 'installation', keyId: 'k2', count: 3 },
    ]);
    expect(report.resealed).toBe(5);
    await expect(verifyKeys(db.store, ring(key2))).resolves.toBeUndefined();
    await expectAllOpen(db.store, ring(key2));
    // Run again: nothing left to do.
    expect((await rotateKeys(db.store, ring(key2))).resealed).toBe(0);
  });

  it('takes up where an interrupted run stopped', async () => {
    await fill(db.store, ring(key1));
    let batches = 0;
    const interrupted = new Proxy(db.store, {
      get(target, name, receiver) {
        if (name !== 'resealSecrets') return Reflect.get(target, name, receiver);
        return (...args: Parameters<Store['resealSecrets']>) => {
          if (++batches > 1) return Promise.reject(new Error('killed'));
          return target.resealSecrets(...args);
        };
      },
    });
    await expect(rotateKeys(interrupted, ring(key2, key1), { batchSize: 2 })).rejects.toThrow(
      'killed',
    );
    const half = await db.store.sealedCounts();
    expect(half.find((c) => c.keyId === 'k2')?.count).toBe(2);
    expect(half.find((c) => c.keyId === 'k1')).toBeDefined();
    // Still needs k1 meanwhile.
    expect(await failure(verifyKeys(db.store, ring(key2)))).toBe(
      "ENCRYPTION_KEYS has no key 'k1' that sealed stored secrets",
    );
    const report = await rotateKeys(db.store, ring(key2, key1), { batchSize: 2 });
    expect(report.resealed).toBe(3);
    await expectAllOpen(db.store, ring(key2));
  });

  it('refuses to rotate without every key that sealed stored values, changing nothing', async () => {
    await fill(db.store, ring(key1));
    await expect(rotateKeys(db.store, ring(key2))).rejects.toThrow(
      "ENCRYPTION_KEYS has no key 'k1' that sealed stored secrets",
    );
    expect((await db.store.sealedCounts()).every((c) => c.keyId === 'k1')).toBe(true);
  });
});
