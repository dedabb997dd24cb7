/**
 * Distributed mode's short memory of each request's reads (src/workspaces/recent.ts): a
 * person's second `/agent` within the TTL reads neither the installation nor the docs row
 * again, and what this replica changes (settings saved, a disconnect, an uninstall) is seen
 * by the very next command. The real bot over HTTP against the fake Slack, on both engines;
 * the reads are counted on the bot's own store.
 */
import { describe, expect, it } from 'vitest';
import { refusalText } from '../../src/access.ts';
import { NOT_CONNECTED_TEXT } from '../../src/slack/connect-blocks.ts';
import type { Store } from '../../src/store/types.ts';
import { homeClick, openModal, submit } from '../helpers/connect.ts';
import {
  A,
  ALPHA,
  bothInstalled,
  closeAfterEach,
  commandFrom,
  deliver,
  keyOf,
  vaultOf,
} from '../helpers/distributed.ts';
import type { Harness } from '../helpers/harness.ts';
import { eventually, sleep } from '../helpers/net.ts';
import { engineKinds } from '../helpers/store-engines.ts';

let h: Harness;
closeAfterEach(() => h);

const ADMIN = A;
const MEMBER = { ...A, user: 'U0A2' };
/** A third project's own key (the emulator answers 403 to it for any other project). */
const GAMMA_KEY = 'mint_gammaKEY_1a2b3c4d5e6f70819203';

/** Counts the bot's reads of installations and docs rows, as its store is asked them. */
function countReads(store: Store) {
  const n = { findInstallation: 0, getDocsConnection: 0, docsConnectionsOfTeam: 0 };
  const s = store as unknown as Record<string, (...a: unknown[]) => Promise<unknown>>;
  for (const name of Object.keys(n) as (keyof typeof n)[]) {
    const inner = s[name]!.bind(store);
    s[name] = (...a) => {
      n[name]++;
      return inner(...a);
    };
  }
  return n;
}

/** An `/agent` that reached the agent: its ack is not a refusal or the not-connected answer. */
async function agentStarts(from: typeof A) {
  const before = h.api.requestsTo('create').length;
  const ack = await commandFrom(h, from, 'add a page');
  expect(ack.status).toBe(200);
  expect(JSON.stringify(ack.body ?? '')).not.toContain(NOT_CONNECTED_TEXT);
  await eventually(() => h.api.requestsTo('create').length > before, 'the job started');
}

describe.each(engineKinds)('distributed mode: the reads kept briefly (%s)', (engine) => {
  it("a second /agent within the TTL reads neither the installation nor the docs row (nor its team's project)", async () => {
    h = await bothInstalled(engine);
    const reads = countReads(h.botStore!);
    await agentStarts(ADMIN);
    expect(reads.findInstallation).toBeGreaterThan(0);
    await sleep(200);
    const first = { ...reads };
    const ack = await commandFrom(h, ADMIN, 'add another page');
    expect(ack.status).toBe(200);
    await eventually(() => h.api.requestsTo('create').length === 2, 'the second job started');
    expect(reads).toEqual(first);
  });

  it('settings saved here are applied by the next command', async () => {
    h = await bothInstalled(engine);
    await agentStarts(MEMBER);
    const modal = await openModal(h, ADMIN, 'docs_settings');
    const saved = await submit(h, ADMIN, modal, {
      set_allowed_users: { selected_users: [ADMIN.user] },
      set_allowed_channels: { selected_conversations: [] },
    });
    expect(saved.body).toBeNull();
    const ack = await commandFrom(h, MEMBER, 'add a page');
    expect(ack.body).toEqual({
      response_type: 'ephemeral',
      text: refusalText('user', 'workspace'),
    });
  });

  it("a project and key replaced here are the next command's", async () => {
    h = await bothInstalled(engine, { projects: { proj_gamma: GAMMA_KEY } });
    await agentStarts(ADMIN);
    const modal = await openModal(h, ADMIN, 'docs_replace_key');
    const saved = await submit(h, ADMIN, modal, {
      docs_project: { value: 'proj_gamma' },
      docs_key: { value: GAMMA_KEY },
    });
    expect(saved.body).toBeNull();
    await eventually(
      async () =>
        (await vaultOf(h).getDocsConnection({ teamId: ALPHA.team })).connection?.projectId ===
        'proj_gamma',
      'replaced',
    );
    await agentStarts(ADMIN);
    const create = h.api.requestsTo('create').at(-1)!;
    expect(create.path).toContain('proj_gamma');
    expect(keyOf(create)).toBe(GAMMA_KEY);
  });

  it('a disconnect here is seen by the next command', async () => {
    h = await bothInstalled(engine);
    await agentStarts(ADMIN);
    expect((await homeClick(h, ADMIN, 'docs_disconnect')).status).toBe(200);
    await eventually(
      async () => (await vaultOf(h).getDocsConnection({ teamId: ALPHA.team })).connection === null,
      'disconnected',
    );
    const ack = await commandFrom(h, ADMIN, 'add a page');
    expect(ack.body).toEqual({ response_type: 'ephemeral', text: NOT_CONNECTED_TEXT });
  });

  it('an uninstall heard here refuses the next command', async () => {
    h = await bothInstalled(engine);
    await agentStarts(ADMIN);
    expect(await deliver(h, h.slack.uninstall({ team: ALPHA.team }))).toEqual([200, 200]);
    await eventually(
      () => h.logLines().filter((l) => l.msg === 'workspace.uninstalled').length === 2,
      'both events handled',
    );
    const creates = h.api.requestsTo('create').length;
    await commandFrom(h, ADMIN, 'add a page');
    await eventually(
      () => h.logLines().some((l) => l.msg === 'slack.not_installed' && l.teamId === ALPHA.team),
      'the refusal',
    );
    await sleep(200);
    expect(h.api.requestsTo('create')).toHaveLength(creates);
  });
});
