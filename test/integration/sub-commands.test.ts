import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parseSubCommand } from '../../src/slack/listeners/sub-commands.ts';
import { SLACK_IDS } from '../fakes/slack.ts';
import { CHANNEL, Harness, USER } from '../helpers/harness.ts';
import { eventually } from '../helpers/net.ts';
import { appMentionEvent, messageEvent, slackEncode } from '../helpers/slack-requests.ts';

/**
 * The words `/agent` answers (help, status, project, doctor) said in a mention or a DM,
 * over signed HTTP events to the real Bolt app: each is answered to the person, and none of
 * them starts a job or reaches a running one as a follow-up.
 */
const ADMIN = 'U0ADMIN';
const BOT = SLACK_IDS.botUser;
const DM = 'D0001';

let h: Harness;
beforeEach(async () => {
  h = await Harness.create({ mode: 'http', env: { ADMIN_USERS: ADMIN } });
  await h.start();
});
afterEach(async (ctx) => {
  if (ctx.task.result?.state === 'fail') console.error(h.logs.split('\n').slice(-40).join('\n'));
  await h.close();
});

/** A person's message in Slack, delivered as Slack would (a mention also as `message`). */
async function say(
  text: string,
  o: { channel?: string; user?: string; thread_ts?: string; as?: 'mention' | 'im' | 'both' } = {},
) {
  const channel = o.channel ?? CHANNEL;
  const user = o.user ?? USER;
  const wire = text.split(`@${BOT}`).map(slackEncode).join(`<@${BOT}>`);
  const thread = o.thread_ts ? { thread_ts: o.thread_ts } : {};
  const { ts } = h.slack.addUserMessage({ channel, user, text: wire, ...thread });
  const fields = { text: wire, channel, user, ts, ...thread };
  const as = o.as ?? 'mention';
  if (as === 'im') await h.deliverEvent(messageEvent({ ...fields, channel_type: 'im' }));
  if (as === 'both') await h.deliverEvent(messageEvent({ ...fields, channel_type: 'channel' }));
  if (as !== 'im') await h.deliverEvent(appMentionEvent(fields));
  return ts;
}

const ephemeralsTo = (user: string) => h.slack.ephemerals.filter((e) => e.user === user);

describe('one parser for /agent, mentions and DMs', () => {
  it('reads the words, and anything else as a prompt', () => {
    expect(parseSubCommand('')).toEqual({ kind: 'help', empty: true });
    expect(parseSubCommand('--help')).toEqual({ kind: 'help', empty: false });
    expect(parseSubCommand('Status')).toEqual({ kind: 'status' });
    expect(parseSubCommand('project')).toEqual({ kind: 'project', arg: undefined });
    expect(parseSubCommand('project  proj_x ')).toEqual({ kind: 'project', arg: 'proj_x' });
    expect(parseSubCommand('doctor')).toEqual({ kind: 'doctor' });
    expect(parseSubCommand('doctor the quickstart')).toEqual({
      kind: 'prompt',
      prompt: 'doctor the quickstart',
    });
    expect(parseSubCommand('projects page: add a table')).toMatchObject({ kind: 'prompt' });
  });
});

describe('sub-commands in a mention', () => {
  it('answers @bot doctor with the health line to a non-admin, only them, and starts no job', async () => {
    h.slack.grantScopes(['commands']);
    await say(`@${BOT} doctor`, { user: 'U0002', as: 'both' });
    const told = await eventually(() => ephemeralsTo('U0002')[0], 'the answer');
    expect(told.channel).toBe(CHANNEL);
    expect(told.text).toMatch(/^✗ 1 check failed — ask an admin to run `\/agent doctor`/);
    expect(told.text).not.toContain(h.dir);
    expect(told.text).not.toContain(SLACK_IDS.team);
    // The admin asking the same way gets the full report, ephemeral too.
    await say(`@${BOT} doctor`, { user: ADMIN });
    const full = await eventually(() => ephemeralsTo(ADMIN)[0], 'the full report');
    expect(full.text).toMatch(/^\*Doctor\*\n/);
    expect(full.text).toContain('✗ Bot scopes: missing');
    expect(h.api.requestsTo('create')).toHaveLength(0);
    expect(h.slack.callsTo('chat.postMessage')).toHaveLength(0);
    expect(h.logLines().filter((l) => l.msg === 'message.doctor')).toHaveLength(2);
  });

  it('answers @bot status and @bot project to the person, in the thread it was asked in', async () => {
    const parent = h.slack.addUserMessage({ channel: CHANNEL, user: 'U0003', text: 'hi' });
    await say(`@${BOT} status`, { thread_ts: parent.ts });
    await say(`@${BOT} project`);
    await eventually(() => ephemeralsTo(USER).length === 2, 'two answers');
    const [status, project] = [
      ephemeralsTo(USER).find((e) => e.thread_ts === parent.ts),
      ephemeralsTo(USER).find((e) => e.thread_ts === undefined),
    ];
    expect(status?.text).toMatch(/no jobs|agent budget/i);
    expect(project?.text).toContain('This channel uses the default project `proj_docs`');
    expect(h.api.requestsTo('create')).toHaveLength(0);
    expect(h.slack.callsTo('conversations.replies')).toHaveLength(0);
  });

  it('answers @bot status in a job thread instead of sending it to the job', async () => {
    const { root, job } = await h.startJob();
    await say(`@${BOT} status`, { thread_ts: root.ts, as: 'both' });
    const told = await eventually(() => ephemeralsTo(USER)[0], 'the answer');
    expect(told.thread_ts).toBe(root.ts);
    // A plain reply is still a follow-up, the same words included: only a mention is
    // asked of the bot.
    await h.reply(root.ts, 'doctor');
    await eventually(() => h.api.jobs.get(job.id)?.messages.length === 2, 'the follow-up');
    expect(h.api.jobs.get(job.id)?.messages).toEqual([
      'Add a quickstart for the Python SDK',
      'doctor',
    ]);
    expect(h.api.requestsTo('message')).toHaveLength(1);
    expect(h.api.requestsTo('create')).toHaveLength(1);
  });
});

describe('sub-commands in a DM', () => {
  it('answers project proj_x, status and doctor in the DM and starts no job', async () => {
    await say('project proj_x', { channel: DM, as: 'im' });
    await eventually(() => h.roots(DM).length === 1, 'the project answer');
    await say('status', { channel: DM, as: 'im' });
    await eventually(() => h.roots(DM).length === 2, 'the status answer');
    await say('doctor', { channel: DM, as: 'im' });
    const answers = await eventually(
      () => (h.roots(DM).length === 3 ? h.roots(DM) : undefined),
      'the doctor answer',
    );
    expect(answers[0]?.text).toBe(
      'Only the admins listed in `ADMIN_USERS` can change the project of a channel.',
    );
    expect(answers[1]?.text).toMatch(/no jobs|agent budget/i);
    expect(answers[2]?.text).toMatch(/^(✓ All checks passed\.|✗ \d checks? failed — ask an admin)/);
    expect(h.api.requestsTo('create')).toHaveLength(0);
    const store = await h.openStore();
    try {
      expect(await store.channelProject('T0001', DM)).toBeUndefined();
    } finally {
      await store.close();
    }
  });
});
