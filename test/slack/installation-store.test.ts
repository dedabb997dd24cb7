import type { Installation } from '@slack/bolt';
import { describe, expect, it } from 'vitest';
import { Keyring } from '../../src/sealed.ts';
import { NotInstalled, vaultInstallationStore } from '../../src/slack/installation-store.ts';
import { authorizeUrlOf } from '../../src/slack/oauth.ts';
import { createVault } from '../../src/workspaces/vault.ts';
import { memoryLogger } from '../helpers/log.ts';
import { describeEachEngine } from '../helpers/store-engines.ts';
import { teamInstallation } from '../workspaces/fixtures.ts';

const keyring = new Keyring([{ id: 'k1', key: new Uint8Array(32).fill(3) }]);
/** What Bolt hands the store after a code exchange (a new object each time, as Bolt builds it). */
const fromBolt = (teamId: string) =>
  ({ ...teamInstallation(teamId).body, authVersion: 'v2' }) as unknown as Installation;

describe("Slack's authorize page", () => {
  it('sits beside the Web API, for Slack and for the fake alike', () => {
    expect(authorizeUrlOf('https://slack.com/api/')).toBe('https://slack.com/oauth/v2/authorize');
    expect(authorizeUrlOf('http://127.0.0.1:4000/api')).toBe(
      'http://127.0.0.1:4000/oauth/v2/authorize',
    );
  });
});

describeEachEngine("Bolt's installation store over the vault", (db) => {
  const setup = () => {
    const vault = createVault(db.store, keyring, { retentionDays: 30 });
    const port = {
      ...vault,
      clearUninstalled: db.store.clearUninstalled,
      pendingForget: db.store.pendingForget,
    };
    const { log, lines } = memoryLogger();
    return { vault, store: vaultInstallationStore(port, log), lines };
  };

  it('a fresh install of an uninstalled workspace starts clean; a late token refresh does not bring it back', async () => {
    const { vault, store } = setup();
    const first = fromBolt('T1');
    store.freshInstall(first);
    await store.storeInstallation(first);
    const q = { teamId: 'T1', enterpriseId: undefined, isEnterpriseInstall: false };
    expect((await store.fetchInstallation(q)).bot?.token).toBe(first.bot?.token);
    // A refresh of a live install is kept.
    const refreshed = { ...first, bot: { ...first.bot!, token: 'xoxe.xoxb-1-refreshed' } };
    await store.storeInstallation(refreshed);
    expect((await store.fetchInstallation(q)).bot?.token).toBe('xoxe.xoxb-1-refreshed');
    await vault.markUninstalled({ teamId: 'T1' });
    await expect(store.fetchInstallation(q)).rejects.toBeInstanceOf(NotInstalled);
    // A refresh that was in flight during the uninstall: refused, nothing stored.
    await expect(store.storeInstallation(refreshed)).rejects.toBeInstanceOf(NotInstalled);
    expect(await db.store.findInstallation({ teamId: 'T1' })).toBeUndefined();
    expect(await db.store.pendingForget({ teamId: 'T1' })).toBeDefined();
    // Installed again (the OAuth callback's install): no forget pending.
    const again = fromBolt('T1');
    store.freshInstall(again);
    await store.storeInstallation(again);
    expect(await db.store.pendingForget({ teamId: 'T1' })).toBeUndefined();
    expect(await store.fetchInstallation(q)).toMatchObject({ team: { id: 'T1' } });
  });

  it('finds an org-wide install for its workspaces, and refuses a body Bolt did not save', async () => {
    const { vault, store } = setup();
    const org = {
      ...fromBolt('T1'),
      team: undefined,
      enterprise: { id: 'E1', name: 'Org' },
      isEnterpriseInstall: true,
    } as unknown as Installation;
    store.freshInstall(org);
    await store.storeInstallation(org);
    const found = await store.fetchInstallation({
      teamId: 'T9',
      enterpriseId: 'E1',
      isEnterpriseInstall: true,
    });
    expect(found).toMatchObject({ enterprise: { id: 'E1' }, isEnterpriseInstall: true });
    await vault.saveInstallation({
      ...teamInstallation('T2'),
      body: { bot: { token: 42 } },
    });
    await expect(
      store.fetchInstallation({
        teamId: 'T2',
        enterpriseId: undefined,
        isEnterpriseInstall: false,
      }),
    ).rejects.toThrow('a stored installation is not one Bolt saved');
  });
});
