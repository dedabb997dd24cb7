/**
 * Distributed mode, a workspace's own allowlists (saved from its App Home's settings form) on
 * the job buttons and the follow-up form, and what a refused person is told there: where to
 * go (the workspace's Docs Agent admins, its App Home's settings), not the deployment's
 * settings. Two layers refuse, and each is shown at work: the access check before every
 * listener (the person clicking or submitting, and the conversation when the payload names
 * one), and the job's own check of its stored thread (the Retry button re-sends the
 * requester's prompt, so the requester must still be allowed; the follow-up form names no
 * conversation, so the thread's channel is checked there, on the lists of the moment it is
 * submitted). The real bot over HTTP against the fake Slack and the API emulator, on both
 * engines.
 */
import { describe, expect, it } from 'vitest';
import { refusalText } from '../../src/access.ts';
import { FOLLOW_UP_INPUT } from '../../src/slack/action-blocks.ts';
import { openModal, submit } from '../helpers/connect.ts';
import { closeAfterEach, commandFrom, type From } from '../helpers/distributed.ts';
import { A, type Alpha, payloadBase, twoWorkspaces } from '../helpers/forged.ts';
import type { Harness } from '../helpers/harness.ts';
import { eventually, sleep } from '../helpers/net.ts';
import { engineKinds } from '../helpers/store-engines.ts';

type Json = Record<string, unknown>;

let h: Harness;
let alpha: Alpha;
closeAfterEach(() => h);

/** Alpha's installer (its Docs Agent admin, and the requester of its jobs) and a member. */
const ADMIN = A;
const MEMBER = { ...A, user: 'U0A2' };

/** What an ALPHA interaction carries as Slack sends it. */
const base = (from: From) => payloadBase(h, from, 'alpha');

/** A click on a job's root button in Alpha's channel; answers its response id. */
async function click(from: From, actionId: string, threadId: number, rootTs: string) {
  const responseId = `click-${Math.random().toString(36).slice(2)}`;
  const res = await h.interact({
    type: 'block_actions',
    ...base(from),
    container: { type: 'message', message_ts: rootTs, channel_id: A.channel },
    channel: { id: A.channel, name: 'docs' },
    message: { type: 'message', ts: rootTs, user: 'U0ABOT' },
    state: { values: {} },
    response_url: h.slack.responseUrl(responseId),
    actions: [{ block_id: 'b', type: 'button', action_id: actionId, value: String(threadId) }],
  });
  expect(res.status).toBe(200);
  return responseId;
}

/** The follow-up form `view` (as Slack opened it) submitted by `from` with this text. */
function submitFollowUp(from: From, view: Json, text: string) {
  return h.interact({
    type: 'view_submission',
    ...base(from),
    view: {
      ...view,
      state: {
        values: {
          [FOLLOW_UP_INPUT.block]: {
            [FOLLOW_UP_INPUT.action]: { type: 'plain_text_input', value: text },
          },
        },
      },
    },
    response_urls: [],
  });
}

/** The admin saves Alpha's lists from the Home's settings form. */
async function saveLists(lists: { users?: string[]; channels?: string[] }) {
  const modal = await openModal(h, ADMIN, 'docs_settings');
  const saved = await submit(h, ADMIN, modal, {
    set_allowed_users: { selected_users: lists.users ?? [] },
    set_allowed_channels: { selected_conversations: lists.channels ?? [] },
  });
  expect(saved.body).toBeNull();
}

const told = (responseId: string) =>
  h.slack.responses
    .filter((r) => r.id === responseId)
    .map((r) => String((r.body as { text?: string }).text));
const lines = (msg: string) => h.logLines().filter((l) => l.msg === msg);

describe.each(engineKinds)(
  'distributed mode: a workspace\u2019s lists on job buttons and forms (%s)',
  (engine) => {
    it('Retry: a clicker off the list is refused by the access check, a requester taken off it by the retry', async () => {
      ({ h, alpha } = await twoWorkspaces(engine));
      // Alpha's admin lets only the member in: the requester of the failed start is off the list.
      await saveLists({ users: [MEMBER.user] });
      const root = alpha.failed.threadTs;
      // The requester clicks Retry: the access check refuses the clicker, in the workspace's words.
      const own = await click(ADMIN, 'job_retry', alpha.failed.id, root);
      await eventually(() => told(own).length > 0, 'the requester told');
      expect(told(own)).toEqual([refusalText('user', 'workspace')]);
      expect(told(own)[0]).toContain(
        "Ask a Docs Agent admin here to add you (Docs Agent's App Home",
      );
      expect(told(own)[0]).not.toMatch(/whoever runs|ALLOWED_USERS/);
      // The member, on the list, clicks it: past the access check, the retry refuses.
      const theirs = await click(MEMBER, 'job_retry', alpha.failed.id, root);
      await eventually(() => told(theirs).length > 0, 'the member told');
      expect(told(theirs)).toEqual([
        `<@${ADMIN.user}>, who asked for this job, may no longer use me here, so I did not retry it. Start your own with \`/agent\`.`,
      ]);
      await sleep(300);
      expect(lines('access.refused')).toMatchObject([
        { surface: 'action', userId: ADMIN.user, reason: 'user' },
      ]);
      expect(lines('retry.requester_refused')).toMatchObject([
        { threadId: alpha.failed.id, userId: MEMBER.user, requester: ADMIN.user },
      ]);
      expect(h.api.requestsTo('create')).toEqual([]);
      expect((await h.botStore!.getThread(alpha.failed.id))?.status).toBe('start_failed');
    });

    it('the follow-up form, submitted after the lists changed: the thread\u2019s channel by the form, the person by the access check', async () => {
      ({ h, alpha } = await twoWorkspaces(engine));
      const root = alpha.active.threadTs;
      // The member opens the form on Alpha's job while everyone may use the bot everywhere.
      const opened = h.slack.views.length;
      await click(MEMBER, 'job_follow_up', alpha.active.id, root);
      const form = await eventually(() => h.slack.views[opened]?.view, 'the form');
      // Then the admin limits Docs Agent to another channel: the form names no channel, so the
      // access check lets it through, and the form's own check refuses the job's channel.
      await saveLists({ channels: ['C0A9'] });
      const byForm = await submitFollowUp(MEMBER, form, 'Add the SAML steps too');
      expect(byForm.body).toMatchObject({ response_action: 'update' });
      const said = JSON.stringify(byForm.body);
      expect(said).toContain(JSON.stringify(refusalText('channel', 'workspace')).slice(1, -1));
      expect(said).toContain('ask a Docs Agent admin here to add this one');
      expect(lines('access.refused')).toMatchObject([
        { surface: 'view', userId: MEMBER.user, channelId: A.channel, threadId: alpha.active.id },
      ]);
      // Then the admin lets only themself in: the access check refuses the member's form first.
      await saveLists({ users: [ADMIN.user] });
      const byAccess = await submitFollowUp(MEMBER, form, 'Add the SAML steps too');
      expect(JSON.stringify(byAccess.body)).toContain(
        JSON.stringify(refusalText('user', 'workspace')).slice(1, -1),
      );
      expect(lines('access.refused')[1]).toMatchObject({ surface: 'view', userId: MEMBER.user });
      expect(lines('access.refused')[1]?.threadId).toBeUndefined();
      await sleep(300);
      expect(lines('follow_up_form.recorded')).toEqual([]);
      expect(h.api.requestsTo('message')).toEqual([]);
    });

    it("answers a command outside the workspace's lists in the workspace's words", async () => {
      ({ h, alpha } = await twoWorkspaces(engine));
      await saveLists({ users: [ADMIN.user], channels: [A.channel] });
      const person = await commandFrom(h, MEMBER, 'status');
      expect(person.body).toEqual({
        response_type: 'ephemeral',
        text: "Sorry, you're not on this workspace's list of people who may use me. Ask a Docs Agent admin here to add you (Docs Agent's App Home, Settings, Allowed people).",
      });
      const place = await commandFrom(h, { ...ADMIN, channel: 'C0A7' }, 'status');
      expect(place.body).toEqual({
        response_type: 'ephemeral',
        text: "Sorry, I'm not enabled in this conversation. Try a channel where I am, or ask a Docs Agent admin here to add this one (Docs Agent's App Home, Settings, Allowed channels).",
      });
    });
  },
);
