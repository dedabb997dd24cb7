import { expect, it } from 'vitest';
import type { NewInstallation } from '../../src/store/types.ts';
import { describeEachEngine } from '../helpers/store-engines.ts';

/** The store sees sealed text only: these stand for sealed values here. */
const install = (over: Partial<NewInstallation> = {}): NewInstallation => ({
  enterpriseId: null,
  teamId: 'T1',
  isEnterpriseInstall: false,
  installerUserId: 'U1',
  botUserId: 'B1',
  sealed: 'sealed-T1',
  keyId: 'k1',
  now: 1000,
  ...over,
});
const org = install({
  enterpriseId: 'E1',
  teamId: null,
  isEnterpriseInstall: true,
  sealed: 'sealed-E1',
});
const docs = (
  over: Partial<{ projectId: string; sealedKey: string; keyId: string; now: number }> = {},
) => ({
  projectId: 'proj_a',
  sealedKey: 'sealed-key-a',
  keyId: 'k1',
  connectedBy: 'U1',
  now: 2000,
  ...over,
});

describeEachEngine('store: installations', (db) => {
  it('saves a workspace installation, replaces it on re-install, finds and deletes it', async () => {
    await db.store.saveInstallation(install());
    expect(await db.store.findInstallation({ teamId: 'T1' })).toEqual({
      enterpriseId: null,
      teamId: 'T1',
      isEnterpriseInstall: false,
      installerUserId: 'U1',
      botUserId: 'B1',
      installedAt: 1000,
      updatedAt: 1000,
      sealed: 'sealed-T1',
      keyId: 'k1',
    });
    await db.store.saveInstallation(install({ sealed: 'sealed-T1b', keyId: 'k2', now: 5000 }));
    expect(
      await db.store.findInstallation({ teamId: 'T1', enterpriseId: undefined }),
    ).toMatchObject({ sealed: 'sealed-T1b', keyId: 'k2', installedAt: 1000, updatedAt: 5000 });
    expect(await db.store.findInstallation({ teamId: 'T2' })).toBeUndefined();
    expect(await db.store.deleteInstallation({ teamId: 'T2' })).toBe(false);
    expect(await db.store.deleteInstallation({ teamId: 'T1' })).toBe(true);
    expect(await db.store.findInstallation({ teamId: 'T1' })).toBeUndefined();
  });

  it("finds an org-wide install by its enterprise, and a team's own install before it", async () => {
    await db.store.saveInstallation(org);
    await db.store.saveInstallation(install({ enterpriseId: 'E1', teamId: 'T9', sealed: 's-T9' }));
    // An org-wide query: the org's install, whatever team the event came from.
    const orgQuery = { enterpriseId: 'E1', teamId: 'T5', isEnterpriseInstall: true };
    expect(await db.store.findInstallation(orgQuery)).toMatchObject({
      sealed: 'sealed-E1',
      teamId: null,
      isEnterpriseInstall: true,
    });
    // A team of the org without an install of its own falls back to the org's.
    expect((await db.store.findInstallation({ enterpriseId: 'E1', teamId: 'T5' }))?.sealed).toBe(
      'sealed-E1',
    );
    // A team with its own install gets its own.
    expect((await db.store.findInstallation({ enterpriseId: 'E1', teamId: 'T9' }))?.sealed).toBe(
      's-T9',
    );
    // No fallback across enterprises, nor for a team outside any.
    expect(await db.store.findInstallation({ enterpriseId: 'E2', teamId: 'T5' })).toBeUndefined();
    expect(await db.store.findInstallation({ teamId: 'T5' })).toBeUndefined();
    expect(
      await db.store.findInstallation({ enterpriseId: 'E2', isEnterpriseInstall: true }),
    ).toBeUndefined();
    // Deleting a team's install never deletes the org's.
    expect(await db.store.deleteInstallation({ enterpriseId: 'E1', teamId: 'T5' })).toBe(false);
    expect(await db.store.deleteInstallation({ enterpriseId: 'E1', teamId: 'T9' })).toBe(true);
    expect((await db.store.findInstallation({ enterpriseId: 'E1', teamId: 'T9' }))?.sealed).toBe(
      'sealed-E1',
    );
    expect(await db.store.deleteInstallation(orgQuery)).toBe(true);
    expect(await db.store.findInstallation({ enterpriseId: 'E1', teamId: 'T9' })).toBeUndefined();
  });

  it('lists ids and times only, and refuses a query naming nothing', async () => {
    await db.store.saveInstallation(org);
    await db.store.saveInstallation(install({ teamId: 'T2', botUserId: null }));
    const listed = await db.store.listInstallations();
    expect(listed).toEqual([
      {
        enterpriseId: null,
        teamId: 'T2',
        isEnterpriseInstall: false,
        installerUserId: 'U1',
        botUserId: null,
        installedAt: 1000,
        updatedAt: 1000,
      },
      {
        enterpriseId: 'E1',
        teamId: null,
        isEnterpriseInstall: true,
        installerUserId: 'U1',
        botUserId: 'B1',
        installedAt: 1000,
        updatedAt: 1000,
      },
    ]);
    expect(JSON.stringify(listed)).not.toContain('sealed');
    await expect(db.store.findInstallation({})).rejects.toThrow(/team id/);
    await expect(db.store.findInstallation({ isEnterpriseInstall: true })).rejects.toThrow(
      /enterprise id/,
    );
    await expect(db.store.saveInstallation(install({ teamId: null }))).rejects.toThrow();
  });
});

describeEachEngine('store: docs connections and settings', (db) => {
  it('connects, replaces and disconnects a workspace, keeping its settings', async () => {
    const ws = { teamId: 'T1' };
    expect(await db.store.getDocsConnection(ws)).toBeUndefined();
    await db.store.connectDocs(ws, docs());
    expect(await db.store.getDocsConnection(ws)).toEqual({
      enterpriseId: null,
      teamId: 'T1',
      connection: {
        projectId: 'proj_a',
        sealedKey: 'sealed-key-a',
        keyId: 'k1',
        connectedBy: 'U1',
        connectedAt: 2000,
      },
      settings: {},
      updatedAt: 2000,
    });
    await db.store.updateWorkspaceSettings(
      ws,
      { digestChannel: 'C123', timeZone: 'Europe/Paris', allowedUsers: ['U0123ABCD', 'W0456EFGH'] },
      3000,
    );
    await db.store.connectDocs(ws, {
      ...docs({ projectId: 'proj_b', sealedKey: 's-b' }),
      now: 4000,
    });
    expect(await db.store.getDocsConnection(ws)).toMatchObject({
      connection: { projectId: 'proj_b', sealedKey: 's-b', connectedAt: 4000 },
      settings: {
        digestChannel: 'C123',
        timeZone: 'Europe/Paris',
        allowedUsers: ['U0123ABCD', 'W0456EFGH'],
      },
    });
    expect(await db.store.disconnectDocs(ws, 5000)).toBe(true);
    expect(await db.store.disconnectDocs(ws, 5000)).toBe(false);
    expect(await db.store.getDocsConnection(ws)).toMatchObject({
      connection: null,
      settings: { digestChannel: 'C123' },
      updatedAt: 5000,
    });
    expect(await db.store.sealedCounts()).toEqual([]);
  });

  it('keeps each workspace to itself, an org team apart from the same team id elsewhere', async () => {
    await db.store.connectDocs({ teamId: 'T1' }, docs());
    await db.store.connectDocs({ enterpriseId: 'E1', teamId: 'T1' }, docs({ sealedKey: 's-E1' }));
    await db.store.updateWorkspaceSettings({ teamId: 'T2' }, { digestCron: '0 8 * * 1' }, 1);
    expect((await db.store.getDocsConnection({ teamId: 'T1' }))?.connection?.sealedKey).toBe(
      'sealed-key-a',
    );
    expect(
      (await db.store.getDocsConnection({ enterpriseId: 'E1', teamId: 'T1' }))?.connection
        ?.sealedKey,
    ).toBe('s-E1');
    expect(await db.store.getDocsConnection({ teamId: 'T2' })).toMatchObject({
      connection: null,
      settings: { digestCron: '0 8 * * 1' },
    });
    expect(await db.store.getDocsConnection({ teamId: 'T3' })).toBeUndefined();
  });

  it("finds a team's docs rows by its team id alone, in whatever org, newest first", async () => {
    await db.store.connectDocs({ enterpriseId: 'E1', teamId: 'T1' }, docs({ now: 3000 }));
    await db.store.connectDocs({ teamId: 'T1' }, docs({ sealedKey: 's-T1', now: 4000 }));
    await db.store.connectDocs({ enterpriseId: 'E1' }, docs({ sealedKey: 's-E1', now: 5000 }));
    await db.store.updateWorkspaceSettings({ teamId: 'T2' }, { adminUsers: ['U0002'] }, 6000);
    const t1 = await db.store.docsConnectionsOfTeam('T1');
    expect(t1.map((r) => [r.enterpriseId, r.teamId, r.connection?.sealedKey])).toEqual([
      [null, 'T1', 's-T1'],
      ['E1', 'T1', 'sealed-key-a'],
    ]);
    expect(await db.store.docsConnectionsOfTeam('T2')).toMatchObject([
      { teamId: 'T2', connection: null, settings: { adminUsers: ['U0002'] } },
    ]);
    // An org's own row (no team) is no team's.
    expect(await db.store.docsConnectionsOfTeam('')).toEqual([]);
    expect(await db.store.docsConnectionsOfTeam('T3')).toEqual([]);
  });

  it('refuses settings that do not pass the schema, storing nothing', async () => {
    const ws = { teamId: 'T1' };
    for (const bad of [
      { digestChannel: '#general' },
      { digestCron: 'every monday' },
      { timeZone: 'Mars/Olympus' },
      { allowedChannels: ['general'] },
      { allowedUsers: ['bob'] },
      { adminUsers: ['bob'] },
      { docsBaseUrl: 'javascript:alert(1)' },
      { docsBaseUrl: 'http://docs.acme.com' },
      { somethingElse: 1 },
    ])
      await expect(
        db.store.updateWorkspaceSettings(ws, bad as Record<string, unknown>, 1),
      ).rejects.toThrow();
    expect(await db.store.getDocsConnection(ws)).toBeUndefined();
    await db.store.updateWorkspaceSettings(ws, { docsBaseUrl: 'https://docs.acme.com' }, 1);
    expect((await db.store.getDocsConnection(ws))?.settings).toEqual({
      docsBaseUrl: 'https://docs.acme.com',
    });
  });
});

describeEachEngine('store: uninstalls', (db) => {
  it('deletes the tokens and the docs key at once, records when the rest is due, and clears it on re-install', async () => {
    await db.store.saveInstallation(install());
    await db.store.connectDocs({ teamId: 'T1' }, docs());
    await db.store.saveInstallation(install({ teamId: 'T2', sealed: 's-T2' }));
    await db.store.connectDocs({ teamId: 'T2' }, docs({ sealedKey: 's-k-T2' }));

    expect(await db.store.markUninstalled({ teamId: 'T1' }, 10_000, 50_000)).toEqual({
      installations: 1,
      connections: 1,
    });
    expect(await db.store.findInstallation({ teamId: 'T1' })).toBeUndefined();
    expect(await db.store.getDocsConnection({ teamId: 'T1' })).toBeUndefined();
    // The other workspace is untouched.
    expect((await db.store.findInstallation({ teamId: 'T2' }))?.sealed).toBe('s-T2');
    expect((await db.store.getDocsConnection({ teamId: 'T2' }))?.connection?.sealedKey).toBe(
      's-k-T2',
    );
    const forget = { enterpriseId: null, teamId: 'T1', uninstalledAt: 10_000, forgetAt: 50_000 };
    expect(await db.store.pendingForget({ teamId: 'T1' })).toEqual(forget);
    // tokens_revoked after app_uninstalled: the first record stands.
    expect(await db.store.markUninstalled({ teamId: 'T1' }, 20_000, 60_000)).toEqual({
      installations: 0,
      connections: 0,
    });
    expect(await db.store.dueForgets(49_999, 10)).toEqual([]);
    expect(await db.store.dueForgets(50_000, 10)).toEqual([forget]);
    expect(await db.store.clearUninstalled({ teamId: 'T1' })).toBe(true);
    expect(await db.store.clearUninstalled({ teamId: 'T1' })).toBe(false);
    expect(await db.store.dueForgets(99_999, 10)).toEqual([]);
  });

  it("an org's uninstall takes its install and the docs keys of the teams it served", async () => {
    await db.store.saveInstallation(org);
    await db.store.saveInstallation(install({ enterpriseId: 'E1', teamId: 'T9' }));
    for (const teamId of ['T5', 'T6', 'T9'])
      await db.store.connectDocs({ enterpriseId: 'E1', teamId }, docs());
    await db.store.connectDocs({ enterpriseId: 'E2', teamId: 'T5' }, docs());
    expect(await db.store.markUninstalled({ enterpriseId: 'E1' }, 1, 2)).toEqual({
      installations: 1,
      connections: 2,
    });
    expect(await db.store.getDocsConnection({ enterpriseId: 'E1', teamId: 'T5' })).toBeUndefined();
    expect(await db.store.getDocsConnection({ enterpriseId: 'E1', teamId: 'T6' })).toBeUndefined();
    // T9 has an install of its own; E2 is another org.
    expect(await db.store.getDocsConnection({ enterpriseId: 'E1', teamId: 'T9' })).toBeDefined();
    expect(await db.store.getDocsConnection({ enterpriseId: 'E2', teamId: 'T5' })).toBeDefined();
    expect(await db.store.findInstallation({ enterpriseId: 'E1', teamId: 'T9' })).toBeDefined();
    expect(await db.store.dueForgets(2, 10)).toEqual([
      { enterpriseId: 'E1', teamId: null, uninstalledAt: 1, forgetAt: 2 },
    ]);
  });
});

describeEachEngine('store: sealed values', (db) => {
  it('counts values by key, keeps the first check value of a key, and re-seals in batches', async () => {
    for (const teamId of ['T1', 'T2', 'T3'])
      await db.store.saveInstallation(install({ teamId, sealed: `old-${teamId}` }));
    await db.store.saveInstallation(org);
    await db.store.connectDocs({ teamId: 'T1' }, docs());
    await db.store.connectDocs({ teamId: 'T2' }, docs({ keyId: 'k2', sealedKey: 'new' }));
    expect(await db.store.sealedCounts()).toEqual([
      { kind: 'docs_key', keyId: 'k1', count: 1 },
      { kind: 'docs_key', keyId: 'k2', count: 1 },
      { kind: 'installation', keyId: 'k1', count: 4 },
    ]);
    expect(await db.store.putKeyCheck('k1', 'check-1', 1)).toBe('check-1');
    expect(await db.store.putKeyCheck('k1', 'check-other', 2)).toBe('check-1');
    expect(await db.store.keyChecks()).toEqual([{ keyId: 'k1', check: 'check-1' }]);

    const seen: string[] = [];
    const reseal = (s: { sealed: string; teamId: string | null; enterpriseId: string | null }) => {
      seen.push(`${s.enterpriseId ?? ''}/${s.teamId ?? ''}:${s.sealed}`);
      return { sealed: `new-${s.sealed}`, keyId: 'k2' };
    };
    expect(await db.store.resealSecrets('installation', 'k2', 3, reseal)).toBe(3);
    expect(await db.store.resealSecrets('installation', 'k2', 3, reseal)).toBe(1);
    expect(await db.store.resealSecrets('installation', 'k2', 3, reseal)).toBe(0);
    expect(seen.sort()).toEqual(['/T1:old-T1', '/T2:old-T2', '/T3:old-T3', 'E1/:sealed-E1']);
    expect(await db.store.resealSecrets('docs_key', 'k2', 3, reseal)).toBe(1);
    expect((await db.store.findInstallation({ teamId: 'T2' }))?.sealed).toBe('new-old-T2');
    expect((await db.store.getDocsConnection({ teamId: 'T1' }))?.connection).toMatchObject({
      sealedKey: 'new-sealed-key-a',
      keyId: 'k2',
    });
    expect(await db.store.sealedCounts()).toEqual([
      { kind: 'docs_key', keyId: 'k2', count: 2 },
      { kind: 'installation', keyId: 'k2', count: 4 },
    ]);
  });

  it('changes nothing in a batch whose re-sealing fails', async () => {
    for (const teamId of ['T1', 'T2'])
      await db.store.saveInstallation(install({ teamId, sealed: `old-${teamId}` }));
    let calls = 0;
    const failing = db.store.resealSecrets('installation', 'k2', 10, (s) => {
      if (++calls === 2) throw new Error('cannot open');
      return { sealed: `new-${s.sealed}`, keyId: 'k2' };
    });
    await expect(failing).rejects.toThrow('cannot open');
    expect(await db.store.sealedCounts()).toEqual([
      { kind: 'installation', keyId: 'k1', count: 2 },
    ]);
    await expect(
      db.store.resealSecrets('installation', 'k2', 10, (s) => ({ sealed: s.sealed, keyId: 'k1' })),
    ).rejects.toThrow(/must be sealed by 'k2'/);
  });
});
