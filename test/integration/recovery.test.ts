import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { START_NOT_SENT } from '../../src/jobs/recovery.ts';
import { PENDING_TS_PREFIX } from '../../src/jobs/service.ts';
import { ANNOUNCEMENT_EVENT, ROOT_EVENT } from '../../src/slack/blocks.ts';
import type { JobThread, Store } from '../../src/store/types.ts';
import { CHANNEL, Harness, USER } from '../helpers/harness.ts';
import { eventually, sleep } from '../helpers/net.ts';

/**
 * Work a crash cut short, found and settled by the next start's recovery pass. Each test
 * leaves the database as the crash would have (through the store, as the dead process
 * would have written it), then starts the real bot on it.
 */
let h: Harness;
beforeEach(async () => {
  h = await Harness.create({ mode: 'http' });
});
afterEach(async (ctx) => {
  if (ctx.task.result?.state === 'fail') console.error(h.logs.split('\n').slice(-30).join('\n'));
  await h.close();
});

/** Long enough ago for any lease (LEASE_MS is 2 s here) and the pending-root grace. */
const LONG_AGO = () => Date.now() - 3 * 60_000;

/** Starts a job with the real bot, then stops it: a thread with a job, ready to reply in. */
async function jobThread(): Promise<{ store: Store; thread: JobThread }> {
  await h.start();
  await h.command('Add a quickstart');
  const root = await eventually(() => h.roots()[0], 'root');
  await eventually(() => h.api.createdJobs()[0], 'job');
  await eventually(() => h.slack.callsTo('chat.update').length > 0, 'root update');
  await h.stopBot();
  const store = await h.openStore();
  const thread = (await store.findThread('T0001', CHANNEL, root.ts))!;
  return { store, thread };
}

/** A reply the person typed in the thread, recorded by a bot that died before sending it. */
async function recordedReply(store: Store, thread: JobThread, text: string) {
  const { ts } = h.slack.addUserMessage({
    channel: CHANNEL,
    user: USER,
    text,
    thread_ts: thread.threadTs,
  });
  const f = await store.recordFollowUp(
    { threadId: thread.id, replyKey: `${CHANNEL}:${ts}`, replyTs: ts, userId: USER, text },
    [],
    LONG_AGO(),
  );
  return { ts, followUp: f! };
}

describe('recovery after a crash', () => {
  it('sends a reply that was recorded but never sent, once', async () => {
    const { store, thread } = await jobThread();
    const { ts } = await recordedReply(store, thread, 'Also cover Windows');
    await store.close();
    await h.start();
    const job = h.api.createdJobs()[0]!;
    await eventually(() => h.api.jobs.get(job.id)?.messages.length === 2, 'the follow-up');
    await eventually(
      () => h.slack.callsTo('reactions.add').some((c) => c.args.timestamp === ts),
      'the :eyes: reaction',
    );
    await sleep(300);
    expect(h.api.jobs.get(job.id)?.messages).toEqual(['Add a quickstart', 'Also cover Windows']);
    expect(h.api.requestsTo('message')).toHaveLength(1);
  });

  it('tells the thread when a reply was cut off mid-send, without resending it', async () => {
    const { store, thread } = await jobThread();
    const { followUp } = await recordedReply(store, thread, 'Use <b>tabs</b> & spaces');
    expect(await store.moveFollowUp(followUp.id, ['received'], 'sending', LONG_AGO())).toBe(true);
    await store.close();
    const polls = h.api.requestsTo('get').length;
    await h.start();
    const notice = await eventually(
      () =>
        h.botReplies(thread.threadTs).find((m) => m.metadata?.event_type === ANNOUNCEMENT_EVENT),
      'the notice in the thread',
    );
    expect(notice.metadata?.event_payload).toMatchObject({
      key: `reply:${followUp.replyKey}:uncertain`,
    });
    expect(notice.text).toContain('cannot tell whether this reply reached the agent');
    expect(notice.text).toContain('interrupted');
    expect(notice.text).toContain('&lt;b&gt;tabs&lt;/b&gt; &amp; spaces'); // escaped
    // The job is watched again, in case the message did reach it.
    await eventually(() => h.api.requestsTo('get').length > polls, 'a poll');
    await sleep(300);
    expect(h.api.requestsTo('message')).toHaveLength(0);
    expect(h.botReplies(thread.threadTs)).toHaveLength(1);
  });

  it('settles a root left "Starting" because its ts was never recorded, without a create', async () => {
    await h.start();
    await h.stopBot();
    const store = await h.openStore();
    const marker = 'marker-1';
    // The bot recorded the thread, posted the root, and died before recording the ts.
    const ts = await h.postAsBot({
      text: 'Starting: docs agent job',
      metadata: { event_type: ROOT_EVENT, event_payload: { marker } },
    });
    await store.createThread(
      {
        teamId: 'T0001',
        channelId: CHANNEL,
        threadTs: `${PENDING_TS_PREFIX}${marker}`,
        userId: USER,
        prompt: 'x',
      },
      LONG_AGO(),
    );
    // A start that died before its root went out leaves nothing to show.
    const gone = await store.createThread(
      {
        teamId: 'T0001',
        channelId: CHANNEL,
        threadTs: `${PENDING_TS_PREFIX}never-posted`,
        userId: USER,
        prompt: 'y',
      },
      LONG_AGO(),
    );
    await store.close();
    await h.start();
    await eventually(
      () => h.slack.callsTo('chat.update').some((c) => c.args.ts === ts),
      'the root update',
    );
    const shown = JSON.stringify(h.slack.history(CHANNEL).find((m) => m.ts === ts)?.blocks);
    expect(shown).toContain(START_NOT_SENT.slice(0, 40));
    expect(h.api.requestsTo('create')).toHaveLength(0);
    const after = await h.openStore();
    try {
      expect(await after.findThread('T0001', CHANNEL, ts)).toMatchObject({
        status: 'start_failed',
      });
      expect(await after.getThread(gone.id)).toBeUndefined();
    } finally {
      await after.close();
    }
  });

  it('marks a root whose post Slack did not confirm as not started, without a create', async () => {
    await h.start({ pendingRootMs: 300 });
    // Slack posts the root, but its answer is lost on the way (a gateway's 500).
    h.slack.failNext('chat.postMessage', { status: 500, tookEffect: true });
    const ack = await h.command('Add a quickstart');
    const told = await h.slack.waitForResponse();
    expect(JSON.stringify(told.body)).toContain('Slack did not confirm my message');
    const root = await eventually(() => h.roots()[0], 'the root Slack did post');
    expect(ack.status).toBe(200);
    await eventually(
      () => h.slack.callsTo('chat.update').some((c) => c.args.ts === root.ts),
      'the root settled',
      5_000,
    );
    const shown = JSON.stringify(h.slack.history(CHANNEL).find((m) => m.ts === root.ts)?.blocks);
    expect(shown).toContain(START_NOT_SENT.slice(0, 40));
    expect(h.api.requestsTo('create')).toHaveLength(0);
  });

  it('says in the thread, once, when the job cannot be checked on, and keeps watching', async () => {
    await h.start();
    await h.command('Add a quickstart');
    const root = await eventually(() => h.roots()[0], 'root');
    const job = await eventually(() => h.api.createdJobs()[0], 'job');
    // The key is revoked: every poll from now on is refused.
    h.api.inject('get', { status: 401 }, 1_000);
    const notice = await eventually(() => h.botReplies(root.ts)[0], 'the notice', 8_000);
    expect(notice.text).toMatch(/can't check on this job.*MINTLIFY_API_KEY/);
    expect(notice.text).not.toContain('mint_');
    const polls = h.api.requestsTo('get').length;
    await sleep(1_000);
    expect(h.api.requestsTo('get').length).toBeGreaterThan(polls); // still watched
    expect(h.botReplies(root.ts)).toHaveLength(1);
    // The key works again: the job's completion is announced as usual.
    h.api.clearFaults();
    h.api.complete(job.id, 'https://github.com/acme/docs/pull/9');
    await eventually(() => h.botReplies(root.ts).length === 2, 'the completion', 8_000);
    expect(h.botReplies(root.ts)[1]?.text).toContain('pull/9');
  });
});
