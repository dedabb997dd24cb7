import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CHANNEL, Harness, SECRETS, USER } from '../helpers/harness.ts';
import { eventually, sleep } from '../helpers/net.ts';
import {
  appMentionEvent,
  eventCallback,
  formEncode,
  messageEvent,
  postSigned,
} from '../helpers/slack-requests.ts';

/** U0001 may use the bot in C0001 (and, being listed, in a DM); nobody else, nowhere else. */
const STRANGER = 'U0666';
const OTHER_CHANNEL = 'C0999';

let h: Harness;
beforeEach(async () => {
  h = await Harness.create({
    mode: 'http',
    env: { ALLOWED_USERS: `${USER}, W0002`, ALLOWED_CHANNELS: CHANNEL },
  });
  await h.start();
});
afterEach(async (ctx) => {
  if (ctx.task.result?.state === 'fail') console.error(h.logs.split('\n').slice(-40).join('\n'));
  await h.close();
});

const refusals = () => h.logLines().filter((l) => l.msg === 'access.refused');

/** An interactive payload (a button click, a modal submission), posted as Slack does. */
async function interact(payload: Record<string, unknown>) {
  const body = formEncode({ payload: JSON.stringify(payload) });
  return postSigned(h.eventsUrl, SECRETS.signingSecret, { body });
}

async function startJob() {
  await h.command('Add a quickstart');
  const root = await eventually(() => h.roots()[0], 'root message');
  await eventually(() => h.api.createdJobs()[0], 'job');
  return root;
}

describe('access control (ALLOWED_USERS, ALLOWED_CHANNELS)', () => {
  it('refuses /agent and /visitors to someone not listed, only to them, calling nothing', async () => {
    const agent = await h.command('Add a quickstart', { user: STRANGER });
    expect(agent.status).toBe(200);
    expect(agent.body).toMatchObject({ response_type: 'ephemeral' });
    expect(String(agent.body?.text)).toContain('not on the list of people who may use');

    const visitors = await h.command('7d', { command: '/visitors', user: STRANGER });
    expect(visitors.body).toMatchObject({ response_type: 'ephemeral' });

    const elsewhere = await h.command('Add a quickstart', { channel: OTHER_CHANNEL });
    expect(String(elsewhere.body?.text)).toContain("I'm not enabled in this conversation");

    await sleep(300);
    expect(h.api.requests).toHaveLength(0);
    expect(h.slack.callsTo('chat.postMessage')).toHaveLength(0);
    expect(refusals().map((l) => [l.surface, l.userId, l.channelId, l.reason])).toEqual([
      ['command', STRANGER, CHANNEL, 'user'],
      ['command', STRANGER, CHANNEL, 'user'],
      ['command', USER, OTHER_CHANNEL, 'channel'],
    ]);
    for (const secret of Object.values(SECRETS)) expect(h.logs).not.toContain(secret);
  });

  it('lets listed people work as before', async () => {
    const root = await startJob();
    expect(root.text).toContain('Starting');
    expect(refusals()).toHaveLength(0);
  });

  it('never records or sends a refused person’s thread reply, and tells them in the thread', async () => {
    const root = await startJob();
    const before = h.api.requests.length;
    const { ts } = await h.reply(root.ts, 'Also delete the changelog', { user: STRANGER });
    const told = await eventually(
      () => h.slack.ephemerals.find((e) => e.user === STRANGER),
      'the refusal',
    );
    expect(told).toMatchObject({ channel: CHANNEL, thread_ts: root.ts });
    await sleep(500); // the recovery pass would have sent a recorded reply by now
    expect(h.api.requestsTo('message')).toHaveLength(0);
    expect(h.api.requests.slice(before).every((r) => r.kind === 'get')).toBe(true);
    const store = await h.openStore();
    expect(await store.findFollowUp(`${CHANNEL}:${ts}`)).toBeUndefined();
    await store.close();
    expect(refusals()).toEqual([
      expect.objectContaining({ surface: 'message', userId: STRANGER, told: true }),
    ]);

    // The listed person's reply in the same thread still becomes a follow-up.
    await h.reply(root.ts, 'Also add a section on auth');
    await eventually(() => h.api.requestsTo('message').length === 1, 'follow-up');
  });

  it('refuses mentions, DMs, button clicks, modal submissions and the Home tab', async () => {
    await h.deliverEvent(
      appMentionEvent({ text: '<@UBOT> write docs', user: STRANGER, channel: CHANNEL }),
    );
    // The same mention arrives as a message too: told once, not twice.
    await h.deliverEvent(
      messageEvent({ text: '<@UBOT> write docs', user: STRANGER, channel: CHANNEL }),
    );
    await h.deliverEvent(
      messageEvent({ text: 'write docs', user: STRANGER, channel: 'D0666', channel_type: 'im' }),
    );
    // Chatter in the channel, outside job threads, is not answered.
    await h.deliverEvent(messageEvent({ text: 'lunch?', user: STRANGER, channel: CHANNEL }));
    await eventually(() => h.slack.ephemerals.length === 2, 'two refusals');
    expect(h.slack.ephemerals.map((e) => [e.channel, e.user])).toEqual([
      [CHANNEL, STRANGER],
      ['D0666', STRANGER],
    ]);

    const responseUrl = h.slack.responseUrl();
    const click = await interact({
      type: 'block_actions',
      user: { id: STRANGER },
      team: { id: 'T0001' },
      channel: { id: CHANNEL },
      response_url: responseUrl,
      actions: [{ action_id: 'job_retry', block_id: 'job_actions', type: 'button', value: '1' }],
      trigger_id: '1.2.3',
      api_app_id: 'A0001',
      token: 'x',
    });
    expect(click.status).toBe(200);
    const answer = await h.slack.waitForResponse();
    expect(answer.body).toMatchObject({ response_type: 'ephemeral', replace_original: false });

    const submit = await interact({
      type: 'view_submission',
      user: { id: STRANGER },
      team: { id: 'T0001' },
      view: {
        id: 'V1',
        type: 'modal',
        callback_id: 'job_follow_up_form',
        private_metadata: JSON.stringify({ channelId: CHANNEL }),
        state: { values: {} },
      },
      api_app_id: 'A0001',
      token: 'x',
    });
    expect(submit.json).toMatchObject({ response_action: 'update', view: { type: 'modal' } });

    await h.deliverEvent(
      eventCallback({ type: 'app_home_opened', user: STRANGER, channel: 'D0666', tab: 'home' }),
    );
    const home = await eventually(() => h.slack.homeViews.get(STRANGER), 'refusal home');
    expect(JSON.stringify(home)).toContain('not on the list');

    await sleep(200);
    expect(h.api.requests).toHaveLength(0);
    expect(h.slack.callsTo('chat.postMessage')).toHaveLength(0);
    expect(refusals().map((l) => l.surface)).toEqual([
      'mention',
      'message',
      'dm',
      'message',
      'action',
      'view',
      'home',
    ]);
  });

  it('lets a listed person DM the bot when ALLOWED_USERS is set', async () => {
    await h.deliverEvent(
      messageEvent({ text: 'hello', user: USER, channel: 'D0001', channel_type: 'im' }),
    );
    await sleep(200);
    expect(refusals()).toHaveLength(0);
    expect(h.slack.ephemerals).toHaveLength(0);
  });
});
