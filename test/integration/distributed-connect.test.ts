/**
 * Distributed mode, connecting a workspace's docs from its App Home: the admin's Connect
 * button and form, the key checked with one read of that project before it is sealed, the
 * field errors, the key never shown again nor seen anywhere else, Replace key, Disconnect,
 * and the refusals: someone who is not an admin, a form of another workspace. The real bot
 * over HTTP against the fake Slack and the API emulator, on both engines.
 */
import { describe, expect, it } from 'vitest';
import { NOT_CONNECTED_TEXT } from '../../src/slack/connect-blocks.ts';
import {
  buttonsOf,
  homeClick,
  homesOf,
  homeWhere,
  nextHome,
  openHome,
  openModal,
  submit,
  textOf,
} from '../helpers/connect.ts';
import {
  A,
  ALPHA,
  ALPHA_KEY,
  B,
  BETA,
  closeAfterEach,
  commandFrom,
  startDistributed,
  vaultOf,
} from '../helpers/distributed.ts';
import type { Harness } from '../helpers/harness.ts';
import { eventually, sleep } from '../helpers/net.ts';
import { engineKinds } from '../helpers/store-engines.ts';

let h: Harness;
closeAfterEach(() => h);

const ADMIN = A;
const MEMBER = { ...A, user: 'U0A2' };
const BETA_ADMIN = B;
/** The key of a project of another organisation (ALPHA_KEY is proj_alpha's), good for it only. */
const OTHER_KEY = 'mint_otherKEY_0a1b2c3d4e5f60718293';
const PROJECT = 'proj_alpha';

async function start(engine: 'sqlite' | 'postgres') {
  const projects = { [PROJECT]: ALPHA_KEY, proj_other: OTHER_KEY };
  h = await startDistributed(engine, { projects, installs: [ADMIN, BETA_ADMIN] });
}

const connection = async (team = ALPHA.team) =>
  (await vaultOf(h).getDocsConnection({ teamId: team })).connection;
const keyField = (modal: Record<string, unknown>) =>
  (modal.blocks as { block_id?: string; element?: Record<string, unknown> }[]).find(
    (b) => b.block_id === 'docs_key',
  )?.element;
const refusals = () => h.logLines().filter((l) => l.msg === 'docs.admin_refused');

/** Everything the bot said or logged, and what the fakes saw of Slack: no key may be in it. */
function everything(acks: unknown[]): string {
  return [
    JSON.stringify(h.slack.calls),
    JSON.stringify(h.slack.responses),
    JSON.stringify(h.slack.views),
    JSON.stringify([...h.slack.homeViews.values()]),
    JSON.stringify(acks),
    h.logs,
  ].join('\n');
}

/** The admin connects `PROJECT` with its key through the Home; answers the form's ack. */
async function connect(key = ALPHA_KEY, project = PROJECT) {
  const modal = await openModal(h, ADMIN, 'docs_connect');
  return submit(h, ADMIN, modal, { docs_project: { value: project }, docs_key: { value: key } });
}

describe.each(engineKinds)('distributed mode: connecting the docs (%s)', (engine) => {
  it('an admin connects with one read of that project with that key, which no one sees again', async () => {
    await start(engine);
    const acks: unknown[] = [];
    expect(buttonsOf(await openHome(h, MEMBER)).size).toBe(0);
    const before = await openHome(h, ADMIN);
    expect([...buttonsOf(before).keys()]).toEqual(['docs_connect', 'docs_settings']);
    expect(textOf(before)).not.toMatch(/not served|this version/i);
    const modal = await openModal(h, ADMIN, 'docs_connect');
    expect(keyField(modal)).not.toHaveProperty('initial_value');
    const homes = homesOf(h, ADMIN.user).length;
    const ack = await submit(h, ADMIN, modal, {
      docs_project: { value: ` ${PROJECT} ` },
      docs_key: { value: ALPHA_KEY },
    });
    acks.push(ack);
    expect(ack).toEqual({ status: 200, body: null });
    // One request, at that project, with that key.
    expect(h.api.requests.map((r) => [r.method, r.path, r.query, r.authorization])).toEqual([
      ['GET', `/v1/agent/${PROJECT}/jobs`, { take: '1' }, `Bearer ${ALPHA_KEY}`],
    ]);
    const c = await connection();
    expect([c?.projectId, c?.connectedBy, c?.openKey()]).toEqual([PROJECT, ADMIN.user, ALPHA_KEY]);
    // The Home now shows the project, who connected it and when, and what an admin can do.
    const after = await nextHome(h, ADMIN.user, homes);
    expect(textOf(after)).toContain(`*Connected:* \`${PROJECT}\` · by <@${ADMIN.user}> · <!date^`);
    expect([...buttonsOf(after).keys()]).toEqual([
      'docs_replace_key',
      'docs_disconnect',
      'docs_settings',
    ]);
    // The how-to-connect answer has stopped for this workspace.
    const agent = await commandFrom(h, ADMIN, 'add a page');
    acks.push(agent);
    expect(JSON.stringify(agent.body)).not.toContain(NOT_CONNECTED_TEXT);
    // Never shown again: the Replace key form has the project, not the key.
    const again = await openModal(h, ADMIN, 'docs_replace_key');
    expect(keyField(again)).not.toHaveProperty('initial_value');
    expect(JSON.stringify(again)).toContain(PROJECT);
    await sleep(200);
    const seen = everything(acks);
    expect(seen).not.toContain(ALPHA_KEY);
    expect(seen).not.toContain(ALPHA_KEY.slice(5));
    expect(h.logLines().filter((l) => l.msg === 'docs.connected')).toMatchObject([
      { teamId: ALPHA.team, userId: ADMIN.user, projectId: PROJECT, replaced: false },
    ]);
    // What it looks like in Slack, when asked (SLACK_VIEW_DUMP=1): slack-view renders it.
    if (process.env.SLACK_VIEW_DUMP)
      await h.slack.dump(`slack-view-out/distributed-${engine}.json`);
  });

  it('says under the field what is wrong with a key or project, saving nothing, in one read at most', async () => {
    await start(engine);
    const acks: unknown[] = [];
    const tries: [string, string, Record<string, RegExp>][] = [
      ['not a key', PROJECT, { docs_key: /^Not an admin API key/ }],
      ['mint_dsc_publicAssistantKey01', PROJECT, { docs_key: /assistant API key/ }],
      [ALPHA_KEY, 'proj alpha!', { docs_project: /^Not a project id/ }],
      ['mint_wrongKEY_000000000000000', PROJECT, { docs_key: /refused this key \(401\)/ }],
      [OTHER_KEY, PROJECT, { docs_key: /may not read project proj_alpha \(403\)/ }],
      [ALPHA_KEY, 'proj_nowhere', { docs_project: /knows no project proj_nowhere .*\(404\)/ }],
    ];
    for (const [key, project, errors] of tries) {
      const ack = await connect(key, project);
      acks.push(ack);
      expect(ack.body?.response_action).toBe('errors');
      const got = ack.body?.errors as Record<string, string>;
      expect(Object.keys(got)).toEqual(Object.keys(errors));
      for (const [block, re] of Object.entries(errors)) expect(got[block]).toMatch(re);
      expect(JSON.stringify(ack.body)).not.toContain(key);
    }
    // The shapes are checked first: only the last three reached the API, once each.
    expect(h.api.requests.map((r) => r.authorization)).toEqual([
      'Bearer mint_wrongKEY_000000000000000',
      `Bearer ${OTHER_KEY}`,
      `Bearer ${ALPHA_KEY}`,
    ]);
    // An API that cannot answer: the check could not be made, try again; one attempt.
    h.api.inject('jobs', { status: 503 });
    const down = await connect();
    expect((down.body?.errors as Record<string, string> | undefined)?.docs_key).toBe(
      'The key could not be checked (the Mintlify API answered 503). Nothing was saved; try again in a minute.',
    );
    h.api.inject('jobs', { slowMs: 4_000 });
    const started = Date.now();
    const slow = await connect();
    expect(Date.now() - started).toBeLessThan(3_000);
    expect((slow.body?.errors as Record<string, string> | undefined)?.docs_key).toMatch(
      /could not be checked \(the Mintlify API did not answer within 2000 ms\)/,
    );
    acks.push(down, slow);
    expect(h.api.requests).toHaveLength(5);
    expect(await connection()).toBeNull();
    expect(everything(acks)).not.toContain(ALPHA_KEY);
    expect(everything(acks)).not.toContain(OTHER_KEY);
  });

  it('replaces the key, and disconnects after Slack\u2019s confirm dialog', async () => {
    await start(engine);
    await openHome(h, ADMIN);
    await connect();
    const first = await connection();
    // Replace: the project stays, a new key for it (the organisation's admin key here).
    const modal = await openModal(h, ADMIN, 'docs_replace_key');
    const newKey = 'mint_test_admin_key_0123456789';
    const ack = await submit(h, ADMIN, modal, {
      docs_project: { value: PROJECT },
      docs_key: { value: newKey },
    });
    expect(ack.body).toBeNull();
    await homeWhere(h, ADMIN.user, (v) => buttonsOf(v).has('docs_disconnect'));
    const replaced = await connection();
    expect(replaced?.openKey()).toBe(newKey);
    expect(replaced?.connectedAt).toBeGreaterThanOrEqual(first?.connectedAt ?? 0);
    expect(
      h
        .logLines()
        .filter((l) => l.msg === 'docs.connected')
        .map((l) => l.replaced),
    ).toEqual([false, true]);
    // Disconnect asks first, in Slack's own dialog.
    const home = await openHome(h, ADMIN);
    expect(buttonsOf(home).get('docs_disconnect')).toMatchObject({
      style: 'danger',
      confirm: { confirm: { text: 'Disconnect' }, deny: { text: 'Keep it' }, style: 'danger' },
    });
    expect((await homeClick(h, ADMIN, 'docs_disconnect')).status).toBe(200);
    await eventually(async () => (await connection()) === null, 'disconnected');
    const after = await homeWhere(h, ADMIN.user, (v) => !buttonsOf(v).has('docs_disconnect'));
    expect([...buttonsOf(after).keys()]).toEqual(['docs_connect', 'docs_settings']);
    const agent = await commandFrom(h, ADMIN, 'add a page');
    expect(agent.body).toEqual({ response_type: 'ephemeral', text: NOT_CONNECTED_TEXT });
  });

  it('refuses someone who is not an admin, and a form of another workspace, by what is stored', async () => {
    await start(engine);
    // A member sees who can connect, and no button.
    const member = await openHome(h, MEMBER);
    expect(buttonsOf(member).size).toBe(0);
    expect(textOf(member)).toContain(`<@${ADMIN.user}>`);
    const modals = h.slack.views.length;
    // A click the member's Home never offered: nothing opens, their Home is published again.
    const homes = homesOf(h, MEMBER.user).length;
    expect((await homeClick(h, MEMBER, 'docs_connect')).status).toBe(200);
    await nextHome(h, MEMBER.user, homes);
    expect(h.slack.views).toHaveLength(modals);
    // The admin's own form, submitted by the member.
    const modal = await openModal(h, ADMIN, 'docs_connect');
    const values = { docs_project: { value: PROJECT }, docs_key: { value: ALPHA_KEY } };
    const byMember = await submit(h, MEMBER, modal, values);
    expect(byMember.body).toMatchObject({ response_action: 'update' });
    expect(JSON.stringify(byMember.body)).toContain('Only a Docs Agent admin');
    // ALPHA's installer, in a payload Slack authorized for BETA: BETA's installer decides.
    const claimsAlpha = { ...BETA_ADMIN, user: ADMIN.user };
    const betaModal = await openModal(h, BETA_ADMIN, 'docs_connect');
    expect((await submit(h, claimsAlpha, betaModal, values)).body).toMatchObject({
      response_action: 'update',
    });
    // BETA's admin submits ALPHA's form (its metadata, its view): another workspace's.
    const crossed = await submit(h, BETA_ADMIN, modal, values);
    expect(JSON.stringify(crossed.body)).toContain('belongs to another workspace');
    // …or BETA's form whose metadata says it is ALPHA's.
    const alphaMeta = JSON.stringify({ teamId: ALPHA.team, enterpriseId: null });
    const metaOfAlpha = await submit(h, BETA_ADMIN, betaModal, values, { metadata: alphaMeta });
    expect(JSON.stringify(metaOfAlpha.body)).toContain('belongs to another workspace');
    // …or BETA's form whose view says it is ALPHA's.
    const viewOfAlpha = await submit(h, BETA_ADMIN, betaModal, values, { viewTeam: ALPHA.team });
    expect(JSON.stringify(viewOfAlpha.body)).toContain('belongs to another workspace');
    // A form with no metadata of ours is not one of ours.
    const bare = await submit(h, BETA_ADMIN, betaModal, values, { metadata: '' });
    expect(JSON.stringify(bare.body)).toContain('could not be read');
    // A Home click from a view of another workspace.
    const n = h.slack.views.length;
    await homeClick(h, BETA_ADMIN, 'docs_connect', { viewTeam: ALPHA.team });
    await sleep(200);
    expect(h.slack.views).toHaveLength(n);
    expect(h.api.requests).toHaveLength(0);
    expect(await connection(ALPHA.team)).toBeNull();
    expect(await connection(BETA.team)).toBeNull();
    expect(refusals().map((l) => [l.reason, l.surface, l.userId, l.teamId])).toEqual([
      ['not_admin', 'action', MEMBER.user, ALPHA.team],
      ['not_admin', 'view', MEMBER.user, ALPHA.team],
      ['not_admin', 'view', ADMIN.user, BETA.team],
      ['other_workspace', 'view', BETA_ADMIN.user, BETA.team],
      ['other_workspace', 'view', BETA_ADMIN.user, BETA.team],
      ['other_workspace', 'view', BETA_ADMIN.user, BETA.team],
      ['malformed', 'view', BETA_ADMIN.user, BETA.team],
      ['other_workspace', 'action', BETA_ADMIN.user, BETA.team],
    ]);
    // Ids only: no form value in the lines.
    expect(JSON.stringify(refusals())).not.toContain(ALPHA_KEY);
    // Once connected, a member's forged Disconnect changes nothing either.
    await connect();
    await homeClick(h, MEMBER, 'docs_disconnect');
    await eventually(() => refusals().length === 9, 'the refusal');
    expect((await connection())?.projectId).toBe(PROJECT);
  });
});
