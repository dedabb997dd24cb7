import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ROOT_EVENT } from '../../src/slack/blocks.ts';
import { SLACK_IDS } from '../fakes/slack.ts';
import { Harness, USER } from '../helpers/harness.ts';
import { eventually } from '../helpers/net.ts';
import { appMentionEvent, messageEvent, slackEncode } from '../helpers/slack-requests.ts';

/**
 * Group DMs, end to end over signed HTTP to the real Bolt app: `/agent` or a mention there
 * starts a job whose thread is in the group DM, and replies in that thread (Slack sends them
 * as `message.mpim`, which manifest.yml subscribes to with `mpim:history`) are follow-ups.
 */
const GROUP = 'G0GROUP1';
const BOT = SLACK_IDS.botUser;

let h: Harness;
beforeEach(async () => {
  h = await Harness.create({ mode: 'http' });
  await h.start();
});
afterEach(async (ctx) => {
  if (ctx.task.result?.state === 'fail') console.error(h.logs.split('\n').slice(-40).join('\n'));
  await h.close();
});

/** A person writes in the group DM; Slack sends it as a `message` of channel_type `mpim`. */
async function inGroup(text: string, o: { thread_ts?: string; user?: string } = {}) {
  const wire = text.split(`@${BOT}`).map(slackEncode).join(`<@${BOT}>`);
  const user = o.user ?? USER;
  const thread = o.thread_ts ? { thread_ts: o.thread_ts } : {};
  const { ts } = h.slack.addUserMessage({ channel: GROUP, user, text: wire, ...thread });
  const fields = { text: wire, channel: GROUP, user, ts, ...thread };
  await h.deliverEvent(messageEvent({ ...fields, channel_type: 'mpim' }));
  return { ts, mention: () => h.deliverEvent(appMentionEvent(fields)) };
}

describe('group DMs', () => {
  it('takes replies in the thread of an /agent job started there as follow-ups', async () => {
    const ack = await h.command('add a Python quickstart', {
      channel: GROUP,
      channelName: 'mpdm-alice--bob--carol-1',
    });
    expect(ack.status).toBe(200);
    const root = await eventually(() => h.roots(GROUP)[0], 'the root in the group DM');
    const job = await eventually(() => h.api.createdJobs()[0], 'the job');
    await h.rootWorking(root.ts);
    await inGroup('Also cover Windows', { thread_ts: root.ts, user: 'U0002' });
    await eventually(() => h.api.jobs.get(job.id)?.messages.length === 2, 'the follow-up');
    expect(h.api.jobs.get(job.id)?.messages).toEqual([
      'add a Python quickstart',
      'Also cover Windows',
    ]);
  });

  it('starts a job from a mention there, and ignores the rest of the conversation', async () => {
    await inGroup('lunch at noon?'); // not to the bot: no job, no answer
    const m = await inGroup(`@${BOT} document the CLI`);
    await m.mention();
    const root = await eventually(
      () =>
        h.slack
          .thread(GROUP, m.ts)
          .find((x) => x.user === BOT && x.metadata?.event_type === ROOT_EVENT),
      'the root under the mention',
    );
    const job = await eventually(() => h.api.createdJobs()[0], 'the job');
    await h.rootWorking(root.ts);
    await inGroup('and its flags', { thread_ts: m.ts });
    await eventually(() => h.api.jobs.get(job.id)?.messages.length === 2, 'the follow-up');
    expect(h.api.requestsTo('create')).toHaveLength(1);
    expect(h.slack.ephemerals).toHaveLength(0);
  });
});
