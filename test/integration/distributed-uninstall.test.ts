/**
 * Distributed mode, uninstalling: Slack's tokens_revoked and app_uninstalled (as the fake
 * Slack sends them on uninstall) delete the workspace's tokens and docs key at once, stop
 * watching its jobs, record when the rest is forgotten, and leave every other workspace
 * alone; later requests of the workspace are refused; a re-install starts clean. The real
 * bot over HTTP, on both engines.
 */
import { describe, expect, it } from 'vitest';
import { NOT_CONNECTED_TEXT } from '../../src/slack/connect-blocks.ts';
import type { Store } from '../../src/store/types.ts';
import {
  ALPHA,
  activeJob,
  BETA,
  closeAfterEach,
  commandFrom,
  deliver,
  EAST,
  eventFrom,
  GLOBEX,
  homeOpened,
  install,
  startDistributed,
  vaultOf,
  WEST,
} from '../helpers/distributed.ts';
import type { Harness } from '../helpers/harness.ts';
import { eventually } from '../helpers/net.ts';
import { tokensRevokedEvent } from '../helpers/slack-requests.ts';
import { engineKinds } from '../helpers/store-engines.ts';

const DAY_MS = 86_400_000;

let h: Harness;
closeAfterEach(() => h, 30);

async function start(engine: 'sqlite' | 'postgres'): Promise<Store> {
  h = await startDistributed(engine, { workspaces: [ALPHA, BETA, EAST, WEST] });
  if (!h.botStore) throw new Error('no store');
  return h.botStore;
}

const connect = (ws: { teamId: string; enterpriseId?: string }, projectId: string) =>
  vaultOf(h).connectDocs(ws, {
    projectId,
    apiKey: `mint_${projectId}_key_0123456789`,
    connectedBy: 'U0',
  });

const uninstalledLines = () => h.logLines().filter((l) => l.msg === 'workspace.uninstalled');
/** What the uninstall events deleted and stopped, together (they may be handled in either order). */
const totals = () => {
  const sum = (field: string) => uninstalledLines().reduce((n, l) => n + Number(l[field]), 0);
  return {
    installations: sum('installations'),
    connections: sum('connections'),
    unwatched: sum('unwatched'),
  };
};

describe.each(engineKinds)('distributed mode: uninstalling (%s)', (engine) => {
  it("deletes the workspace's tokens and docs key at once, stops watching its jobs, refuses it later, and re-installs clean", async () => {
    const store = await start(engine);
    await install(h, { team: ALPHA.team, user: 'U0A1' });
    await install(h, { team: BETA.team, user: 'U0B1' });
    await connect({ teamId: 'T0A' }, 'proj_a');
    await connect({ teamId: 'T0B' }, 'proj_b');
    const jobA = await activeJob(store, 'T0A', 'C0A1');
    const jobB = await activeJob(store, 'T0B', 'C0B1');
    // People's tokens revoked (the app asks for none): the install stays.
    const people = tokensRevokedEvent(
      { team_id: 'T0A', bot_user: ALPHA.botUser },
      { oauth: ['U0A1'] },
    );
    expect(await deliver(h, [people])).toEqual([200]);
    const before = Date.now();

    expect(await deliver(h, h.slack.uninstall({ team: ALPHA.team }))).toEqual([200, 200]);
    await eventually(() => uninstalledLines().length === 2, 'both events handled');
    expect(await store.findInstallation({ teamId: 'T0A' })).toBeUndefined();
    expect(await store.getDocsConnection({ teamId: 'T0A' })).toBeUndefined();
    const forget = await store.pendingForget({ teamId: 'T0A' });
    expect(forget?.uninstalledAt).toBeGreaterThanOrEqual(before);
    expect(forget?.forgetAt).toBe((forget?.uninstalledAt ?? 0) + 30 * DAY_MS);
    expect(await store.getThread(jobA.id)).toMatchObject({
      status: 'active',
      unwatchedBy: 'app_uninstalled',
      nextPollAt: null,
    });
    // The other workspace: untouched.
    expect(await store.getThread(jobB.id)).toMatchObject({ unwatchedBy: null });
    expect(await store.findInstallation({ teamId: 'T0B' })).toBeDefined();
    expect((await store.getDocsConnection({ teamId: 'T0B' }))?.connection).toMatchObject({
      projectId: 'proj_b',
    });
    // One line per event, ids and counts only; between them, everything was deleted once.
    const lines = uninstalledLines();
    expect(lines.map((l) => l.cause).sort()).toEqual(['app_uninstalled', 'tokens_revoked']);
    for (const {
      level,
      time,
      cause,
      forgetAt,
      installations,
      connections,
      unwatched,
      ...l
    } of lines)
      expect(l).toEqual({
        component: 'uninstall',
        teamId: 'T0A',
        enterpriseId: null,
        isEnterpriseInstall: false,
        msg: 'workspace.uninstalled',
      });
    expect(totals()).toEqual({ installations: 1, connections: 1, unwatched: 1 });

    // Later requests of the workspace reach nothing.
    expect((await eventFrom(h, { team: 'T0A', user: 'U0A1' }, homeOpened('U0A1'))).status).toBe(
      200,
    );
    await eventually(
      () => h.logLines().some((l) => l.msg === 'slack.not_installed' && l.teamId === 'T0A'),
      'the refusal',
    );
    expect(h.slack.callsTo('views.publish')).toHaveLength(0);

    // Installed again: no forget pending, a new install, and no docs connection.
    const again = await install(h, { team: ALPHA.team, user: 'U0A2' });
    expect(again.status).toBe(200);
    expect(await store.pendingForget({ teamId: 'T0A' })).toBeUndefined();
    expect(await store.findInstallation({ teamId: 'T0A' })).toMatchObject({
      installerUserId: 'U0A2',
    });
    expect(await store.getDocsConnection({ teamId: 'T0A' })).toBeUndefined();
    const ack = await commandFrom(h, { team: 'T0A', user: 'U0A2', channel: 'C0A1' }, 'a page');
    expect(ack.body).toEqual({ response_type: 'ephemeral', text: NOT_CONNECTED_TEXT });
    expect(
      h
        .logLines()
        .filter((l) => l.msg === 'install.stored')
        .at(-1),
    ).toMatchObject({
      teamId: 'T0A',
      reinstalled: true,
    });
    expect(h.api.requests).toHaveLength(0);
  });

  it("an org-wide uninstall ends the org's install and the workspaces it served, not one with its own", async () => {
    const store = await start(engine);
    await install(h, { enterprise: GLOBEX.id, orgWide: true, user: 'W0ADMIN' });
    await install(h, { team: EAST.team, user: 'W0G1' });
    const east = { enterpriseId: GLOBEX.id, teamId: EAST.team };
    const west = { enterpriseId: GLOBEX.id, teamId: WEST.team };
    await connect(east, 'proj_east');
    await connect(west, 'proj_west');
    const jobEast = await activeJob(store, EAST.team, 'C0G1');
    const jobWest = await activeJob(store, WEST.team, 'C0G2');

    expect(await deliver(h, h.slack.uninstall({ enterprise: GLOBEX.id }))).toEqual([200, 200]);
    await eventually(() => uninstalledLines().length === 2, 'both events handled');
    for (const line of uninstalledLines())
      expect(line).toMatchObject({ teamId: null, enterpriseId: 'E0G', isEnterpriseInstall: true });
    expect(totals()).toEqual({ installations: 1, connections: 1, unwatched: 1 });
    expect(await store.listInstallations()).toMatchObject([
      { enterpriseId: 'E0G', teamId: 'T0G1', isEnterpriseInstall: false },
    ]);
    expect(await store.getDocsConnection(west)).toBeUndefined();
    expect((await store.getDocsConnection(east))?.connection).toMatchObject({
      projectId: 'proj_east',
    });
    expect(await store.getThread(jobWest.id)).toMatchObject({ unwatchedBy: 'app_uninstalled' });
    expect(await store.getThread(jobEast.id)).toMatchObject({ unwatchedBy: null });
    expect(await store.pendingForget({ enterpriseId: 'E0G' })).toBeDefined();
    // West's requests, through the org's install, are refused now.
    const from = { team: WEST.team, enterprise: GLOBEX.id, orgWide: true, user: 'W0G2' };
    await eventFrom(h, from, homeOpened('W0G2'));
    await eventually(
      () => h.logLines().some((l) => l.msg === 'slack.not_installed' && l.teamId === 'T0G2'),
      'the refusal',
    );
  });
});
