import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { StoredMessage } from '../fakes/slack.ts';
import { CHANNEL, Harness, USER } from '../helpers/harness.ts';
import { eventually, sleep } from '../helpers/net.ts';
import { blockActions, findButton } from '../helpers/slack-requests.ts';

/**
 * Forged and stale interactive payloads, through the real action ids and callback ids, over
 * signed HTTP against the fakes. The bot starts with two channels and two people allowed,
 * makes jobs in both, and is restarted with one of each taken off the lists: what the old
 * buttons and forms name is then checked against the stored job, never taken on trust.
 */
const LATER_REFUSED = 'C0777';
const OTHER = 'U0002';

let h: Harness;
beforeEach(async () => {
  h = await Harness.create({
    mode: 'http',
    env: { ALLOWED_USERS: `${USER},${OTHER}`, ALLOWED_CHANNELS: `${CHANNEL},${LATER_REFUSED}` },
  });
  await h.start();
});
afterEach(async (ctx) => {
  if (ctx.task.result?.state === 'fail') console.error(h.logs.split('\n').slice(-50).join('\n'));
  await h.close();
});

/** The same database and fakes, restarted with narrower lists. */
async function narrow(env: { ALLOWED_USERS?: string; ALLOWED_CHANNELS?: string }) {
  await h.stopBot();
  Object.assign(h.env, env);
  await h.start();
}

const message = (channel: string, ts: string) =>
  h.slack.history(channel).find((m) => m.ts === ts) as StoredMessage;
const answers = (responseId: string) =>
  h.slack.responses
    .filter((r) => r.id === responseId)
    .map((r) => (r.body as { text?: string }).text ?? '');
const refusals = () => h.logLines().filter((l) => l.msg === 'access.refused');

/** `/agent` in `channel`; waits for the root to show `status`. */
async function start(channel: string, status: string, user = USER) {
  const n = h.roots(channel).length;
  expect((await h.command('Add a quickstart', { channel, user })).status).toBe(200);
  const root = await eventually(() => h.roots(channel)[n], 'root message');
  await eventually(() => message(channel, root.ts).text.startsWith(status), status);
  return root;
}

async function threadIdOf(channel: string, ts: string): Promise<number> {
  const store = await h.openStore();
  try {
    const t = await store.findThread('T0001', channel, ts);
    if (!t) throw new Error('no thread');
    return t.id;
  } finally {
    await store.close();
  }
}

/** Opens the "Send follow-up" form from the root's button, as its channel allows now. */
async function openForm(channel: string, root: StoredMessage) {
  const n = h.slack.views.length;
  await h.click(root.ts, 'job_follow_up', { channel });
  const opened = await eventually(() => h.slack.views[n], 'views.open');
  return opened.view;
}

/**
 * A click on a real button of `root` (in `from`), sent as if made in `claimed`: what a forged
 * payload, or a copy of the message elsewhere, says.
 */
async function forgedClick(from: string, root: StoredMessage, actionId: string, claimed: string) {
  const found = findButton(message(from, root.ts), actionId);
  if (!found) throw new Error(`no ${actionId} on the root`);
  const responseId = `forged-${actionId}`;
  const payload = blockActions({
    channel: claimed,
    messageTs: root.ts,
    user: USER,
    triggerId: h.slack.issueTriggerId(USER),
    responseUrl: h.slack.responseUrl(responseId),
    ...found,
  });
  expect((await h.interact(payload)).status).toBe(200);
  return responseId;
}

describe('the Send follow-up form (job_follow_up_form)', () => {
  it('sends nothing from an old form, or a forged one, naming a job in a refused channel', async () => {
    const allowed = await start(CHANNEL, 'Working');
    const refused = await start(LATER_REFUSED, 'Working');
    const oldForm = await openForm(LATER_REFUSED, refused);
    const form = await openForm(CHANNEL, allowed);
    await narrow({ ALLOWED_CHANNELS: CHANNEL });
    const postsBefore = h.slack.callsTo('chat.postMessage').length;

    const old = await h.submitView(oldForm, { follow_up: { text: 'Also delete the changelog' } });
    expect(old.body).toMatchObject({ response_action: 'update', view: { type: 'modal' } });
    expect(JSON.stringify(old.body)).toContain("I'm not enabled in this conversation");
    const refusedId = await threadIdOf(LATER_REFUSED, refused.ts);
    const forged = {
      ...form,
      id: 'VFORGED1',
      private_metadata: JSON.stringify({ threadId: refusedId }),
    };
    const forgedAnswer = await h.submitView(forged, { follow_up: { text: 'Delete it all' } });
    expect(forgedAnswer.body).toMatchObject({ response_action: 'update' });

    // The form of a job in an allowed channel still works.
    const sent = await h.submitView(form, { follow_up: { text: 'Add a section on auth' } });
    expect(sent.body?.response_action).toBeUndefined();
    const msg = await eventually(() => h.api.requestsTo('message')[0], 'the allowed follow-up');
    expect(msg.body).toEqual({ prompt: 'Add a section on auth' });
    await eventually(() => h.slack.ephemerals.some((e) => e.channel === CHANNEL), 'its ack');
    await sleep(500); // the recovery pass would have sent a recorded follow-up by now
    expect(h.api.requestsTo('message')).toHaveLength(1);
    expect(h.slack.ephemerals.filter((e) => e.channel === LATER_REFUSED)).toHaveLength(0);
    const posted = h.slack.callsTo('chat.postMessage').slice(postsBefore);
    expect(posted.filter((c) => c.args.channel === LATER_REFUSED)).toHaveLength(0);
    const store = await h.openStore();
    expect(await store.findFollowUp(`view:${String(oldForm.id)}`)).toBeUndefined();
    expect(await store.findFollowUp('view:VFORGED1')).toBeUndefined();
    await store.close();
    expect(refusals().map((l) => [l.surface, l.channelId, l.reason, l.threadId])).toEqual([
      ['view', LATER_REFUSED, 'channel', refusedId],
      ['view', LATER_REFUSED, 'channel', refusedId],
    ]);
  });
});

describe('the root buttons (job_retry, job_follow_up, job_unwatch)', () => {
  it('do nothing when the click names a job of another channel', async () => {
    h.api.inject('create', { status: 429, retryAfterSec: 600 });
    const failed = await start(LATER_REFUSED, 'Could not start');
    const working = await start(LATER_REFUSED, 'Working');
    await narrow({ ALLOWED_CHANNELS: CHANNEL });
    const viewsBefore = h.slack.views.length;

    // Each real button of a job in the refused channel, its click claiming the allowed one.
    const retry = await forgedClick(LATER_REFUSED, failed, 'job_retry', CHANNEL);
    const follow = await forgedClick(LATER_REFUSED, working, 'job_follow_up', CHANNEL);
    const unwatch = await forgedClick(LATER_REFUSED, working, 'job_unwatch', CHANNEL);
    for (const id of [retry, follow, unwatch])
      await eventually(() => answers(id)[0]?.includes("can't find the job"), `${id} answered`);
    // Clicked where they are, the buttons are refused with the channel.
    const stale = await h.click(working.ts, 'job_unwatch', { channel: LATER_REFUSED });
    const told = await eventually(() => answers(stale.responseId)[0], 'the refusal');
    expect(told).toContain("I'm not enabled in this conversation");

    await sleep(300);
    expect(h.api.requestsTo('create')).toHaveLength(2); // the failed start and the working one
    expect(h.slack.views.length).toBe(viewsBefore);
    const store = await h.openStore();
    const [f, w] = await Promise.all([
      store.findThread('T0001', LATER_REFUSED, failed.ts),
      store.findThread('T0001', LATER_REFUSED, working.ts),
    ]);
    await store.close();
    expect(f).toMatchObject({ status: 'start_failed' });
    expect(w).toMatchObject({ status: 'active', unwatchedBy: null });
    expect(h.logLines().filter((l) => l.msg === 'action.clicked')).toHaveLength(3);
  });
});

describe('Retry', () => {
  it('does not re-run the job of a requester taken off ALLOWED_USERS, for anyone', async () => {
    h.api.inject('create', { status: 429, retryAfterSec: 600 }, 2);
    const theirs = await start(CHANNEL, 'Could not start', OTHER);
    const mine = await start(CHANNEL, 'Could not start', USER);
    await narrow({ ALLOWED_USERS: USER });

    const click = await h.click(theirs.ts, 'job_retry');
    const answer = await eventually(() => answers(click.responseId)[0], 'the answer');
    expect(answer).toContain(`<@${OTHER}>, who asked for this job, may no longer use me here`);
    // The listed person's own failed start still retries.
    await h.click(mine.ts, 'job_retry');
    await eventually(() => message(CHANNEL, mine.ts).text.startsWith('Working'), 'mine retried');
    await sleep(300);
    expect(h.api.createdJobs()).toHaveLength(1);
    expect(message(CHANNEL, theirs.ts).text).toMatch(/^Could not start/);
    expect(h.logLines().filter((l) => l.msg === 'retry.requester_refused')).toEqual([
      expect.objectContaining({ userId: USER, requester: OTHER }),
    ]);
  });
});

describe('the Draft it form (insight_draft_form)', () => {
  it('refuses a submission whose metadata names a channel not allowed, and starts nothing', async () => {
    const view = {
      id: 'VDRAFT1',
      type: 'modal',
      callback_id: 'insight_draft_form',
      private_metadata: JSON.stringify({ teamId: 'T0001', channelId: 'C0999', kind: 'search' }),
    };
    const answer = await h.submitView(view, { draft: { prompt: 'Document the search page' } });
    expect(answer.body).toMatchObject({ response_action: 'update', view: { type: 'modal' } });
    expect(JSON.stringify(answer.body)).toContain("I'm not enabled in this conversation");
    // The same form naming an allowed channel starts its job there.
    const allowed = {
      ...view,
      id: 'VDRAFT2',
      private_metadata: view.private_metadata.replace('C0999', CHANNEL),
    };
    expect((await h.submitView(allowed, { draft: { prompt: 'Document it' } })).body).toBeNull();
    await eventually(() => h.api.createdJobs().length === 1, 'the allowed job');
    await sleep(300);
    expect(h.api.createdJobs()).toHaveLength(1);
    expect(h.roots('C0999')).toHaveLength(0);
    expect(refusals()).toEqual([
      expect.objectContaining({ surface: 'view', channelId: 'C0999', reason: 'channel' }),
    ]);
  });
});
