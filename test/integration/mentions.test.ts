import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { START_NOT_SENT } from '../../src/jobs/recovery.ts';
import { PENDING_TS_PREFIX } from '../../src/jobs/service.ts';
import { AGENT_USAGE, ROOT_EVENT } from '../../src/slack/blocks.ts';
import { SLACK_IDS } from '../fakes/slack.ts';
import { CHANNEL, Harness, USER } from '../helpers/harness.ts';
import { eventually } from '../helpers/net.ts';
import { appMentionEvent, messageEvent, slackEncode } from '../helpers/slack-requests.ts';

/**
 * Mentions and DMs, driving the real Bolt app over signed HTTP: the same job flow as
 * `/agent`, in the mention's thread or the DM, handled once however often Slack delivers it.
 */
let h: Harness;
beforeEach(async () => {
  h = await Harness.create({ mode: 'http' });
  await h.start();
});
afterEach(async (ctx) => {
  if (ctx.task.result?.state === 'fail') console.error(h.logs.split('\n').slice(-40).join('\n'));
  await h.close();
});

const BOT = SLACK_IDS.botUser;
const DM = 'D0001';

/** A person's message in Slack (typed text encoded as Slack does, `<@UBOT>` as markup). */
function say(text: string, o: { channel?: string; thread_ts?: string; user?: string } = {}) {
  const channel = o.channel ?? CHANNEL;
  const wire = text.split(`@${BOT}`).map(slackEncode).join(`<@${BOT}>`);
  const { ts } = h.slack.addUserMessage({
    channel,
    user: o.user ?? USER,
    text: wire,
    ...(o.thread_ts ? { thread_ts: o.thread_ts } : {}),
  });
  const fields = {
    text: wire,
    channel,
    user: o.user ?? USER,
    ts,
    ...(o.thread_ts ? { thread_ts: o.thread_ts } : {}),
  };
  return {
    ts,
    asMention: (eventId?: string) =>
      appMentionEvent({ ...fields, ...(eventId ? { event_id: eventId } : {}) }),
    asMessage: (channelType: 'channel' | 'im' = 'channel') =>
      messageEvent({ ...fields, channel_type: channelType }),
  };
}

/** The bot's root posted inside thread `threadTs` (a mention's). */
const rootIn = (threadTs: string, channel = CHANNEL) =>
  h.slack
    .thread(channel, threadTs)
    .find((m) => m.user === BOT && m.metadata?.event_type === ROOT_EVENT);

const logCount = (msg: string) => h.logLines().filter((l) => l.msg === msg).length;

describe('mentions', () => {
  it("shows the job's one status reaction on the person's mention, never on the bot's messages", async () => {
    const m = say(`@${BOT} add a Go quickstart`);
    await h.deliverEvent(m.asMention());
    const root = await eventually(() => rootIn(m.ts), 'the root in the mention thread');
    const job = await eventually(() => h.api.createdJobs()[0], 'the job');
    h.api.complete(job.id, 'https://github.com/acme/docs/pull/5');
    const mention = () => h.slack.history(CHANNEL).find((x) => x.ts === m.ts)!;
    await eventually(
      () =>
        mention()
          .reactions.map((r) => r.name)
          .join() === 'white_check_mark',
      'the check mark on the mention',
    );
    await eventually(() => h.botReplies(m.ts).length === 2, 'root and the PR reply');
    const reacted = new Set(h.slack.callsTo('reactions.add').map((c) => c.args.timestamp));
    expect([...reacted]).toEqual([m.ts]);
    expect(h.slack.history(CHANNEL).find((x) => x.ts === root.ts)?.reactions).toEqual([]);
    const reply = h.botReplies(m.ts).find((x) => x.ts !== root.ts)!;
    expect(reply.text).toBe(
      'The agent opened a pull request: <https://github.com/acme/docs/pull/5|acme/docs#5>',
    );
  });

  it('starts one job from a mention, with its root in the mention thread', async () => {
    const m = say(`@${BOT} add a Python quickstart & <tabs>`);
    expect((await h.deliverEvent(m.asMention())).status).toBe(200);
    const root = await eventually(() => rootIn(m.ts), 'the root in the mention thread');
    expect(root.thread_ts).toBe(m.ts);
    expect(h.roots()).toHaveLength(0); // nothing new at the top of the channel
    const job = await eventually(() => h.api.createdJobs()[0], 'the job');
    expect(h.api.jobs.get(job.id)?.messages).toEqual(['add a Python quickstart & <tabs>']);
    await h.rootWorking(root.ts);
    const store = await h.openStore();
    try {
      expect(await store.findThread('T0001', CHANNEL, m.ts)).toMatchObject({
        threadTs: m.ts,
        rootTs: root.ts,
        jobId: job.id,
        contextMessages: null,
      });
    } finally {
      await store.close();
    }
    // A reply under the mention is a follow-up of that job.
    await h.reply(m.ts, 'Also cover Windows');
    await eventually(() => h.api.jobs.get(job.id)?.messages.length === 2, 'the follow-up');
    expect(h.api.requestsTo('create')).toHaveLength(1);
  });

  it('starts one job however often Slack delivers the mention (message, app_mention, retry)', async () => {
    const m = say(`@${BOT} document the CLI`);
    await h.deliverEvent(m.asMessage());
    await h.deliverEvent(m.asMention('EvFIRST'));
    await h.deliverEvent(m.asMention('EvFIRST'), 1); // Slack's retry of the same event
    await h.deliverEvent(m.asMention('EvOTHER')); // the same message under another event id
    await eventually(() => logCount('event.duplicate') >= 2, 'both repeats seen as repeats');
    const root = await eventually(() => rootIn(m.ts), 'the root');
    await h.rootWorking(root.ts);
    expect(h.api.requestsTo('create')).toHaveLength(1);
    expect(h.slack.thread(CHANNEL, m.ts).filter((x) => x.user === BOT)).toHaveLength(1);
  });

  it('sends the human thread as bounded context, without the bot, and the root says so', async () => {
    const parent = say('Our SDK docs are confusing');
    await h.postAsBot({ text: 'BOT-NOISE: unrelated bot reply', thread_ts: parent.ts });
    const long = 'x'.repeat(3_000);
    for (let i = 1; i <= 24; i++)
      say(i === 24 ? `msg ${i} ${long}` : `msg ${i}`, {
        thread_ts: parent.ts,
        user: i % 2 ? 'U0002' : 'U0003',
      });
    const m = say(`@${BOT} add a Python quickstart`, { thread_ts: parent.ts });
    await h.deliverEvent(m.asMention());
    const job = await eventually(() => h.api.createdJobs()[0], 'the job');
    const prompt = h.api.jobs.get(job.id)?.messages[0] ?? '';
    expect(prompt.startsWith('add a Python quickstart')).toBe(true);
    const context = prompt.slice(prompt.indexOf('oldest first:\n') + 'oldest first:\n'.length);
    const lines = context.split('\n');
    expect(lines.length).toBeLessThanOrEqual(20);
    expect(context.length).toBeLessThanOrEqual(8_000);
    expect(lines.at(-1)).toBe(`<@U0003>: msg 24 ${long}`); // the newest is kept
    expect(lines[0]).toMatch(/^<@U000[23]>: msg \d+$/);
    expect(prompt).not.toContain('BOT-NOISE');
    expect(prompt).not.toContain('Our SDK docs are confusing'.repeat(2));
    expect(prompt).not.toContain(`<@${BOT}>`);

    const root = await eventually(() => rootIn(parent.ts), 'the root in the human thread');
    expect(root.thread_ts).toBe(parent.ts);
    expect(JSON.stringify(root.blocks)).toContain(
      `with ${lines.length} earlier messages from this thread as context`,
    );
    // The mention's `message` copy, arriving once the thread is a job's: not a follow-up.
    await h.deliverEvent(m.asMessage());
    await eventually(() => logCount('event.duplicate') >= 1, 'the copy seen as a repeat');
    await h.rootWorking(root.ts);
    expect(h.api.requestsTo('message')).toHaveLength(0);
    expect(h.api.requestsTo('create')).toHaveLength(1);
  });

  it('treats a mention in a job thread as one follow-up, not a new job', async () => {
    await h.command('Add a quickstart');
    const root = await eventually(() => h.roots()[0], 'the /agent root');
    const job = await eventually(() => h.api.createdJobs()[0], 'the job');
    await h.rootWorking(root.ts);
    const m = say(`@${BOT} also cover Windows`, { thread_ts: root.ts });
    await h.deliverEvent(m.asMention());
    await h.deliverEvent(m.asMessage());
    await eventually(() => h.api.jobs.get(job.id)?.messages.length === 2, 'the follow-up');
    await eventually(() => logCount('event.duplicate') >= 1, 'the second delivery dropped');
    expect(h.api.jobs.get(job.id)?.messages[1]).toBe('also cover Windows');
    expect(h.api.requestsTo('message')).toHaveLength(1);
    expect(h.api.requestsTo('create')).toHaveLength(1);
  });

  it('starts one job when two people mention the bot in the same thread at once', async () => {
    const parent = say('Can someone document retries?');
    const a = say(`@${BOT} document retries`, { thread_ts: parent.ts });
    const b = say(`@${BOT} and backoff too`, { thread_ts: parent.ts, user: 'U0002' });
    await Promise.all([h.deliverEvent(a.asMention()), h.deliverEvent(b.asMention())]);
    const root = await eventually(() => rootIn(parent.ts), 'the root');
    await h.rootWorking(root.ts);
    const job = await eventually(() => h.api.createdJobs()[0], 'the job');
    // The other mention is told a job is already (or still) starting, or, once the job has
    // started, it reaches that job as a follow-up: never a second job.
    await eventually(
      () =>
        h.slack.ephemerals.some((e) => /already starting|still starting/.test(e.text ?? '')) ||
        h.api.jobs.get(job.id)?.messages.length === 2,
      'the other mention handled',
    );
    expect(h.api.requestsTo('create')).toHaveLength(1);
  });

  it('answers an empty mention and help with the usage, only to the person', async () => {
    const empty = say(`@${BOT}`);
    await h.deliverEvent(empty.asMention());
    const help = say(`@${BOT} help`);
    await h.deliverEvent(help.asMention());
    await eventually(() => h.slack.ephemerals.length === 2, 'two ephemeral answers');
    for (const e of h.slack.ephemerals) expect(e).toMatchObject({ user: USER, text: AGENT_USAGE });
    expect(h.api.requestsTo('create')).toHaveLength(0);
    expect(h.slack.callsTo('chat.postMessage')).toHaveLength(0);
  });

  it('names the bot by its auth.test name when it cannot post in a channel', async () => {
    h.slack.failNext('chat.postMessage', { error: 'not_in_channel' });
    const m = say(`@${BOT} add a Python quickstart`);
    await h.deliverEvent(m.asMention());
    const told = await eventually(() => h.slack.ephemerals[0], 'the answer');
    expect(told.text).toContain(`\`/invite @${SLACK_IDS.botUserName}\``);
    expect(told.text).not.toContain('Docs Agent');
    expect(h.api.requestsTo('create')).toHaveLength(0);
  });
});

describe('direct messages', () => {
  it('starts a job in the DM, and a reply in its thread is a follow-up', async () => {
    const m = say('add a Python quickstart', { channel: DM });
    await h.deliverEvent(m.asMessage('im'));
    const root = await eventually(() => h.roots(DM)[0], 'the root in the DM');
    expect(root.thread_ts).toBeUndefined();
    const job = await eventually(() => h.api.createdJobs()[0], 'the job');
    await h.rootWorking(root.ts);
    await h.reply(root.ts, 'Also cover Windows', { channel: DM });
    await eventually(() => h.api.jobs.get(job.id)?.messages.length === 2, 'the follow-up');
    expect(h.api.jobs.get(job.id)?.messages).toEqual([
      'add a Python quickstart',
      'Also cover Windows',
    ]);
    // A repeat of the DM starts nothing.
    await h.deliverEvent(m.asMessage('im'));
    await eventually(() => logCount('event.duplicate') >= 1, 'the repeat');
    expect(h.api.requestsTo('create')).toHaveLength(1);
  });

  it('answers an empty DM with the usage in the DM', async () => {
    await h.deliverEvent(say('?', { channel: DM }).asMessage('im'));
    const answer = await eventually(() => h.roots(DM)[0], 'the answer');
    expect(answer.text).toBe(AGENT_USAGE);
    expect(h.api.requestsTo('create')).toHaveLength(0);
  });

  it('runs /agent in a DM the same way', async () => {
    const ack = await h.command('add a Python quickstart', { channel: DM });
    expect(ack.status).toBe(200);
    const root = await eventually(() => h.roots(DM)[0], 'the root in the DM');
    await eventually(() => h.api.createdJobs()[0], 'the job');
    await h.rootWorking(root.ts);
  });

  it('gives no invite hint where inviting is impossible', async () => {
    h.slack.failNext('chat.postMessage', { error: 'channel_not_found' });
    await h.deliverEvent(say('add a Python quickstart', { channel: DM }).asMessage('im'));
    const answer = await eventually(() => h.roots(DM)[0], 'the answer in the DM');
    expect(answer.text).toContain("can't post in this conversation");
    expect(answer.text).not.toContain('/invite');

    h.slack.removeBot('D0002');
    const ack = await h.command('add a Python quickstart', { channel: 'D0002' });
    const reply = await h.slack.waitForResponse((r) => r.id === ack.responseUrl.split('/').pop());
    expect(JSON.stringify(reply.body)).not.toContain('/invite');
    expect(h.api.requestsTo('create')).toHaveLength(0);
  });

  it('names the bot by its auth.test name in a channel', async () => {
    h.slack.removeBot('C0009');
    const ack = await h.command('add a Python quickstart', { channel: 'C0009' });
    const reply = await h.slack.waitForResponse((r) => r.id === ack.responseUrl.split('/').pop());
    expect(JSON.stringify(reply.body)).toContain(`/invite @${SLACK_IDS.botUserName}`);
  });
});

describe('crash recovery of a root posted inside a thread', () => {
  it('finds it by its marker with conversations.replies and marks it not started', async () => {
    await h.stopBot();
    const m = say(`@${BOT} add a Python quickstart`);
    const marker = 'marker-in-thread';
    // The bot recorded the thread, posted the root in the mention thread, and died.
    const rootTs = await h.postAsBot({
      text: 'Starting: docs agent job',
      thread_ts: m.ts,
      metadata: { event_type: ROOT_EVENT, event_payload: { marker } },
    });
    const store = await h.openStore();
    await store.createThread(
      {
        teamId: 'T0001',
        channelId: CHANNEL,
        threadTs: m.ts,
        rootTs: `${PENDING_TS_PREFIX}${marker}`,
        userId: USER,
        prompt: 'add a Python quickstart',
      },
      Date.now() - 3 * 60_000,
    );
    await store.close();
    await h.start();
    await eventually(
      () => h.slack.callsTo('chat.update').some((c) => c.args.ts === rootTs),
      'the root update',
    );
    const shown = JSON.stringify(h.slack.thread(CHANNEL, m.ts).find((x) => x.ts === rootTs));
    expect(shown).toContain(START_NOT_SENT.slice(0, 40));
    expect(h.slack.callsTo('conversations.replies').length).toBeGreaterThan(0);
    expect(h.api.requestsTo('create')).toHaveLength(0);
    const after = await h.openStore();
    try {
      expect(await after.findThread('T0001', CHANNEL, m.ts)).toMatchObject({
        rootTs,
        status: 'start_failed',
      });
    } finally {
      await after.close();
    }
  });
});
