import { randomBytes } from 'node:crypto';
import { expect, it } from 'vitest';
import { Keyring, SealError } from '../../src/sealed.ts';
import { createVault, SettingsInvalid } from '../../src/workspaces/vault.ts';
import { describeEachEngine } from '../helpers/store-engines.ts';
import { SECRETS, teamInstallation } from './fixtures.ts';

const k1 = new Keyring([{ id: 'k1', key: randomBytes(32) }]);
const DAY = 86_400_000;

describeEachEngine('vault: installations and docs keys sealed at rest', (db) => {
  const vault = (keyring = k1, now = 1_000) =>
    createVault(db.store, keyring, { retentionDays: 30, now: () => now });

  it('saves an installation sealed and opens it whole; the store holds no token', async () => {
    const v = vault();
    await v.saveInstallation(teamInstallation('T1'));
    const row = await db.store.findInstallation({ teamId: 'T1' });
    expect(row?.keyId).toBe('k1');
    expect(row?.sealed).toMatch(/^v1\.k1\./);
    for (const secret of Object.values(SECRETS)) expect(row?.sealed).not.toContain(secret);
    const found = await v.findInstallation({ teamId: 'T1' });
    expect(found).toMatchObject({ teamId: 'T1', isEnterpriseInstall: false, botUserId: 'B1' });
    expect(found?.body).toEqual(teamInstallation('T1').body);
    expect(await v.listInstallations()).toHaveLength(1);
    expect(await v.deleteInstallation({ teamId: 'T1' })).toBe(true);
    expect(await v.findInstallation({ teamId: 'T1' })).toBeUndefined();
  });

  it("opens an org-wide install for a team of the org (the org's row, the org's context)", async () => {
    const v = vault();
    const body = { enterprise: { id: 'E1' }, bot: { token: SECRETS.botToken } };
    await v.saveInstallation({
      enterpriseId: 'E1',
      teamId: 'T5', // ignored: an org-wide install belongs to the enterprise
      isEnterpriseInstall: true,
      installerUserId: 'U1',
      botUserId: 'B1',
      body,
    });
    expect((await v.findInstallation({ enterpriseId: 'E1', teamId: 'T7' }))?.body).toEqual(body);
    expect(
      (await v.findInstallation({ enterpriseId: 'E1', isEnterpriseInstall: true }))?.body,
    ).toEqual(body);
  });

  it('refuses a sealed value copied into another row or workspace', async () => {
    const v = vault();
    await v.saveInstallation(teamInstallation('T1'));
    const stolen = (await db.store.findInstallation({ teamId: 'T1' }))!;
    await db.store.saveInstallation({ ...stolen, teamId: 'T2', now: 2 });
    await expect(v.findInstallation({ teamId: 'T2' })).rejects.toThrow(SealError);
    await v.connectDocs(
      { teamId: 'T1' },
      { projectId: 'p', apiKey: SECRETS.docsKey, connectedBy: 'U1' },
    );
    const key = (await db.store.getDocsConnection({ teamId: 'T1' }))!.connection!;
    await db.store.connectDocs({ teamId: 'T2' }, { ...key, now: 3 });
    const copied = await v.getDocsConnection({ teamId: 'T2' });
    expect(() => copied.connection!.openKey()).toThrow(SealError);
    expect((await v.getDocsConnection({ teamId: 'T1' })).connection!.openKey()).toBe(
      SECRETS.docsKey,
    );
  });

  it('keeps a docs key sealed until the API client opens it, and shows it nowhere else', async () => {
    const v = vault();
    expect(await v.getDocsConnection({ teamId: 'T1' })).toEqual({ connection: null, settings: {} });
    await v.connectDocs(
      { teamId: 'T1' },
      { projectId: 'proj_a', apiKey: SECRETS.docsKey, connectedBy: 'U1' },
    );
    await v.updateSettings({ teamId: 'T1' }, { digestChannel: 'C0123ABCD' });
    const got = await v.getDocsConnection({ teamId: 'T1' });
    expect(got.connection).toMatchObject({
      projectId: 'proj_a',
      connectedBy: 'U1',
      connectedAt: 1_000,
    });
    expect(got.settings).toEqual({ digestChannel: 'C0123ABCD' });
    expect(JSON.stringify(got)).not.toMatch(/mint_|v1\.k1/);
    expect(got.connection!.openKey()).toBe(SECRETS.docsKey);
    expect(await v.disconnectDocs({ teamId: 'T1' })).toBe(true);
    expect((await v.getDocsConnection({ teamId: 'T1' })).connection).toBeNull();
  });

  it('refuses bad settings by field name, never by value', async () => {
    const v = vault();
    const bad = { digestChannel: 'secret-channel-name', docsBaseUrl: 'ftp://x' };
    const err = await v.updateSettings({ teamId: 'T1' }, bad).then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(SettingsInvalid);
    expect((err as SettingsInvalid).fields).toEqual(['digestChannel', 'docsBaseUrl']);
    expect((err as Error).message).not.toContain('secret-channel-name');
  });

  it('deletes the tokens and the docs key at once on uninstall, the rest due after 30 days', async () => {
    const v = vault(k1, 5_000);
    await v.saveInstallation(teamInstallation('T1'));
    await v.connectDocs(
      { teamId: 'T1' },
      { projectId: 'p', apiKey: SECRETS.docsKey, connectedBy: 'U1' },
    );
    await v.saveInstallation(teamInstallation('T2'));
    expect(await v.markUninstalled({ teamId: 'T1' })).toEqual({
      installations: 1,
      connections: 1,
      forgetAt: 5_000 + 30 * DAY,
    });
    expect(await v.findInstallation({ teamId: 'T1' })).toBeUndefined();
    expect(await v.getDocsConnection({ teamId: 'T1' })).toEqual({ connection: null, settings: {} });
    expect(await db.store.sealedCounts()).toEqual([
      { kind: 'installation', keyId: 'k1', count: 1 },
    ]);
    // A second uninstall event keeps the first record's dates.
    expect((await vault(k1, 9_000).markUninstalled({ teamId: 'T1' })).forgetAt).toBe(
      5_000 + 30 * DAY,
    );
  });
});
