/**
 * Distributed mode: a workspace's own settings from its App Home (saved through the vault,
 * refused field by field), and the thread replies recorded before the ack: only those of a
 * workspace that is installed and has its docs connected, since a recorded reply is sent to
 * the docs API later. The real bot over HTTP against the fake Slack, on both engines.
 */
import { describe, expect, it } from 'vitest';
import {
  buttonsOf,
  homesOf,
  homeWhere,
  nextHome,
  openHome,
  openModal,
  submit,
  submitAsPerson,
  textOf,
} from '../helpers/connect.ts';
import {
  A,
  ALPHA,
  ALPHA_KEY,
  activeJob,
  B,
  BETA,
  closeAfterEach,
  connectDocs,
  deliver,
  eventFrom,
  type From,
  startDistributed,
  threadReply,
  vaultOf,
} from '../helpers/distributed.ts';
import type { Harness } from '../helpers/harness.ts';
import { eventually } from '../helpers/net.ts';
import { engineKinds } from '../helpers/store-engines.ts';

let h: Harness;
closeAfterEach(() => h);

const ADMIN = A;
const MEMBER = { ...A, user: 'U0A2' };

async function start(engine: 'sqlite' | 'postgres') {
  h = await startDistributed(engine, { installs: [ADMIN] });
}

const settings = async () => (await vaultOf(h).getDocsConnection({ teamId: ALPHA.team })).settings;
const initial = (modal: Record<string, unknown>, block: string) => {
  const b = (modal.blocks as { block_id?: string; element?: Record<string, unknown> }[]).find(
    (x) => x.block_id === block,
  );
  const e = b?.element ?? {};
  return e.initial_value ?? e.initial_conversation ?? e.initial_conversations ?? e.initial_users;
};

describe.each(engineKinds)('distributed mode: a workspace\u2019s settings (%s)', (engine) => {
  it('an admin saves them, each field refused in its own words, and names more admins', async () => {
    await start(engine);
    const modal = await openModal(h, ADMIN, 'docs_settings');
    const kinds = (modal.blocks as { element?: { type: string } }[]).map((b) => b.element?.type);
    expect(kinds.filter(Boolean)).toEqual([
      'multi_users_select',
      'multi_conversations_select',
      'plain_text_input',
      'plain_text_input',
      'multi_conversations_select',
      'multi_users_select',
      'plain_text_input',
    ]);
    const bad = await submit(h, ADMIN, modal, {
      set_digest_cron: { value: 'every monday' },
      set_time_zone: { value: 'Mars/Olympus' },
      set_docs_url: { value: 'http://docs.alpha.example' },
      set_admin_users: { selected_users: [MEMBER.user] },
    });
    expect(bad.body).toEqual({
      response_action: 'errors',
      errors: {
        set_digest_cron:
          'Not a cron expression: five fields, minute hour day month weekday, such as 0 9 * * 1 (Mondays at 09:00).',
        set_time_zone: 'Not an IANA time zone name, such as Europe/Berlin or America/New_York.',
        set_docs_url: 'Not an https address, such as https://docs.example.com.',
      },
    });
    expect(await settings()).toEqual({});
    // The member is no admin yet: their submission of the same form is refused.
    const refused = await submit(h, MEMBER, modal, { set_time_zone: { value: 'Europe/Paris' } });
    expect(refused.body).toMatchObject({ response_action: 'update' });
    const good = await submit(h, ADMIN, modal, {
      set_digest_channel: { selected_conversations: ['C0A1'] },
      set_digest_cron: { value: '0  8 * * 1' },
      set_time_zone: { value: 'Europe/Berlin' },
      set_allowed_channels: { selected_conversations: ['C0A1'] },
      set_allowed_users: { selected_users: [] },
      set_admin_users: { selected_users: [MEMBER.user] },
      set_docs_url: { value: 'https://docs.alpha.example/' },
    });
    expect(good.body).toBeNull();
    const saved = {
      digestChannel: 'C0A1',
      digestCron: '0 8 * * 1',
      timeZone: 'Europe/Berlin',
      allowedChannels: ['C0A1'],
      adminUsers: [MEMBER.user],
      docsBaseUrl: 'https://docs.alpha.example',
    };
    expect(await settings()).toEqual(saved);
    const home = await homeWhere(h, ADMIN.user, (v) => textOf(v).includes('Europe/Berlin'));
    expect(textOf(home)).toContain('*Admins*\\n<@U0A1>, <@U0A2>');
    expect(textOf(home)).toContain('The admin list takes effect at once');
    // Now an admin, the member sees the button, and the form opens for them, as saved.
    const memberHome = await openHome(h, MEMBER);
    expect(buttonsOf(memberHome).has('docs_connect')).toBe(true);
    const again = await openModal(h, MEMBER, 'docs_settings');
    expect(initial(again, 'set_digest_channel')).toEqual(['C0A1']);
    expect(initial(again, 'set_digest_cron')).toBe('0 8 * * 1');
    expect(initial(again, 'set_admin_users')).toEqual([MEMBER.user]);
    expect(initial(again, 'set_docs_url')).toBe('https://docs.alpha.example');
    expect(
      h.logLines().filter((l) => l.msg === 'docs.settings_saved' || l.msg === 'docs.admin_refused'),
    ).toMatchObject([
      { msg: 'docs.admin_refused', reason: 'not_admin', userId: MEMBER.user },
      { msg: 'docs.settings_saved', userId: ADMIN.user, fields: Object.keys(saved) },
    ]);
  });
});

describe.each(engineKinds)('distributed mode: the digest channel (%s)', (engine) => {
  it('an admin clears the digest channel chosen before, and the rest stays as saved', async () => {
    await start(engine);
    const first = await openModal(h, ADMIN, 'docs_settings');
    const chosen = await submitAsPerson(h, ADMIN, first, {
      set_digest_channel: ['C0A1'],
      set_time_zone: 'Europe/Berlin',
    });
    expect(chosen.body).toBeNull();
    expect(await settings()).toEqual({ digestChannel: 'C0A1', timeZone: 'Europe/Berlin' });
    // The form opens with the channel chosen; one channel at most.
    const again = await openModal(h, ADMIN, 'docs_settings');
    expect(initial(again, 'set_digest_channel')).toEqual(['C0A1']);
    expect(() => submitAsPerson(h, ADMIN, again, { set_digest_channel: ['C0A1', 'C0A2'] })).toThrow(
      'set_digest_channel holds at most 1',
    );
    // The admin removes the channel and saves: no digest channel, the time zone kept.
    const homes = homesOf(h, ADMIN.user).length;
    const cleared = await submitAsPerson(h, ADMIN, again, { set_digest_channel: [] });
    expect(cleared.body).toBeNull();
    expect(await settings()).toEqual({ timeZone: 'Europe/Berlin' });
    expect(textOf(await nextHome(h, ADMIN.user, homes))).toContain('*Digest*\\nno channel');
    const reopened = await openModal(h, ADMIN, 'docs_settings');
    expect(initial(reopened, 'set_digest_channel')).toBeUndefined();
  });
});

/** A person's reply in a job's thread, as Slack sends the event; answers its reply key. */
async function replyIn(from: From & { channel: string }, threadTs: string, text: string) {
  const ts = `${(Date.now() / 1000 + Math.random()).toFixed(6)}`;
  const event = threadReply(from, threadTs, text, ts);
  expect([200, 401, 500]).toContain((await eventFrom(h, from, event)).status);
  return `${from.channel}:${ts}`;
}

describe.each(engineKinds)('distributed mode: thread replies before the ack (%s)', (engine) => {
  it('records a reply only for a workspace installed with its docs connected', async () => {
    await start(engine);
    const store = h.botStore!;
    const alpha = await activeJob(store, ALPHA.team, 'C0A1');
    const beta = await activeJob(store, BETA.team, 'C0B1');
    const recorded = async (key: string) => (await store.findFollowUp(key)) !== undefined;
    // Installed, no docs connected: the gate answers after the ack; nothing is recorded.
    const notConnected = await replyIn(MEMBER, alpha.threadTs, 'also the changelog');
    // Never installed, though a docs project is on record for it.
    await connectDocs(h, B, 'proj_beta', 'mint_betaKEY_00000000000');
    const neverInstalled = await replyIn(B, beta.threadTs, 'and the API page');
    expect(await recorded(notConnected)).toBe(false);
    expect(await recorded(neverInstalled)).toBe(false);
    // Connected: recorded before the ack, as in single-workspace mode.
    await connectDocs(h, A, 'proj_alpha', ALPHA_KEY);
    expect(await recorded(await replyIn(MEMBER, alpha.threadTs, 'and the FAQ'))).toBe(true);
    // Uninstalled: its tokens and key are gone, and so is its right to be recorded.
    await deliver(h, h.slack.uninstall({ team: ALPHA.team }));
    await eventually(() => h.logLines().some((l) => l.msg === 'workspace.uninstalled'), 'gone');
    expect(await recorded(await replyIn(MEMBER, alpha.threadTs, 'one more thing'))).toBe(false);
  });
});
