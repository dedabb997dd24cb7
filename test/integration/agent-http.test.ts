import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CHANNEL, Harness, SECRETS, USER } from '../helpers/harness.ts';
import { eventually, sleep } from '../helpers/net.ts';
import { formEncode, postSigned, slashCommand, uniqueTs } from '../helpers/slack-requests.ts';

let h: Harness;
beforeEach(async () => {
  h = await Harness.create({ mode: 'http' });
  await h.start();
});
afterEach(async (ctx) => {
  if (ctx.task.result?.state === 'fail') console.error(h.logs.split('\n').slice(-40).join('\n'));
  await h.close();
});

const startJob = (prompt?: string) => h.startJob(prompt);

const texts = (ms: { text: string }[]) => ms.map((m) => m.text);
/** Everything the bot sent as messages or message updates, as one string to search. */
const postedArgs = () =>
  JSON.stringify(
    h.slack
      .callsTo('chat.postMessage')
      .concat(h.slack.callsTo('chat.update'))
      .map((c) => c.args),
  );

describe('/agent over signed HTTP', () => {
  it('acks at once, posts the root, creates one job with the Bearer key, and maps the thread', async () => {
    // A slow create proves the ack does not wait for the job.
    h.api.inject('create', { slowMs: 1_500 });
    const ack = await h.command('Add a quickstart for the Python SDK');
    expect(ack.status).toBe(200);
    expect(h.api.requestsTo('create').every((r) => r.status === null)).toBe(true);

    const root = await eventually(() => h.roots()[0], 'root message');
    expect(root.text).toContain('Starting');
    expect(root.text).toContain('<@U0001>');
    const job = await eventually(() => h.api.createdJobs()[0], 'job');
    await eventually(() => h.slack.callsTo('chat.update').length > 0, 'root update');

    const creates = h.api.requestsTo('create');
    expect(creates).toHaveLength(1);
    expect(creates[0]).toMatchObject({
      authorization: `Bearer ${SECRETS.apiKey}`,
      body: { prompt: 'Add a quickstart for the Python SDK' },
    });

    const updated = h.slack.history(CHANNEL).find((m) => m.ts === root.ts)!;
    const shown = JSON.stringify(updated.blocks);
    for (const part of ['Working', 'acme/docs@main']) expect(shown).toContain(part);
    // The model and job id are developer detail: in the thread once there is an outcome.
    for (const part of [job.id, job.model]) expect(shown).not.toContain(part);

    const store = await h.openStore();
    expect(await store.findThread('T0001', CHANNEL, root.ts)).toMatchObject({
      jobId: job.id,
      status: 'active',
    });
    await store.close();
  });

  it('posts the PR once in the thread as owner/repo#N with its button, and one status reaction', async () => {
    const { root, job } = await startJob();
    h.api.complete(job.id, 'https://github.com/acme/docs/pull/42');
    await eventually(() => h.botReplies(root.ts).length === 1, 'completion announcement');
    await sleep(600); // several more poll intervals: nothing new may appear
    const replies = h.botReplies(root.ts);
    expect(texts(replies)).toEqual([
      'The agent opened a pull request: <https://github.com/acme/docs/pull/42|acme/docs#42>',
    ]);
    const reply = JSON.stringify(replies[0]?.blocks);
    expect(reply).toContain('"url":"https://github.com/acme/docs/pull/42"');
    expect(reply).toContain(`Job \`${job.id}\` · model ${job.model}`);
    expect(replies[0]?.metadata).toMatchObject({ event_type: 'docs_agent_announcement' });
    const rootNow = h.slack.history(CHANNEL).find((m) => m.ts === root.ts)!;
    expect(JSON.stringify(rootNow.blocks)).toContain(
      '"url":"https://github.com/acme/docs/pull/42"',
    );
    expect(rootNow.text).toMatch(/^Completed/);
    // One ✅ in the channel: the reaction on the root (the message the /agent made), not a
    // second one on the reply.
    await eventually(
      () => rootNow.reactions.map((r) => r.name).join() === 'white_check_mark',
      'reaction',
    );
    const shown = JSON.stringify(h.slack.history(CHANNEL).map((m) => [m.text, m.blocks]));
    expect(shown.match(/white_check_mark/g)).toHaveLength(1); // the root's status line
    expect(h.slack.callsTo('reactions.add').map((c) => c.args.timestamp)).toEqual(
      h.slack.callsTo('reactions.add').map(() => root.ts),
    );
  });

  it('says plainly that no files were changed when prLink is null', async () => {
    const { root, job } = await startJob();
    h.api.complete(job.id, null);
    const [reply] = await eventually(
      () => (h.botReplies(root.ts).length ? h.botReplies(root.ts) : undefined),
      'announcement',
    );
    expect(reply?.text).toContain('No files were changed');
  });

  it('announces failed and archived jobs', async () => {
    const a = await startJob('first');
    h.api.fail(a.job.id);
    await eventually(() => h.botReplies(a.root.ts).length === 1, 'failure announcement');
    expect(h.botReplies(a.root.ts)[0]?.text).toContain('failed');

    const b = await startJob('second');
    h.api.archive(b.job.id);
    await eventually(() => h.botReplies(b.root.ts).length === 1, 'archive announcement');
    expect(h.botReplies(b.root.ts)[0]?.text).toContain('archived');
  });

  it('announces a job that answers 404 as lost, once, and stops polling it', async () => {
    const { root, job } = await startJob();
    h.api.forget(job.id);
    await eventually(() => h.botReplies(root.ts).length === 1, 'lost announcement');
    const gets = h.api.requestsTo('get').length;
    await sleep(600);
    expect(h.api.requestsTo('get').length).toBe(gets);
    expect(texts(h.botReplies(root.ts))).toEqual([
      expect.stringContaining('can no longer be found'),
    ]);
  });

  it('retries an announcement Slack rate-limited, and posts it once', async () => {
    const { root, job } = await startJob();
    h.slack.failNext('chat.postMessage', { status: 429, retryAfterSec: 1 });
    h.api.complete(job.id, 'https://github.com/acme/docs/pull/3');
    await eventually(
      () => h.botReplies(root.ts).length === 1,
      'announcement after the rate limit',
      8_000,
    );
    await sleep(300);
    expect(h.botReplies(root.ts)).toHaveLength(1);
    expect(h.slack.callsTo('chat.postMessage').filter((c) => c.status === 429)).toHaveLength(1);
    expect(h.logs).toContain('announce.deferred');
  });

  it('keeps polling through transient API errors', async () => {
    const { root, job } = await startJob();
    h.api.inject('get', { status: 500 }, 3);
    h.api.inject('get', { malformed: true });
    h.api.complete(job.id, 'https://github.com/acme/docs/pull/9');
    await eventually(() => h.botReplies(root.ts).length === 1, 'announcement after errors', 8_000);
    expect(h.logs).toContain('poll.failed');
  });
});

describe('thread replies', () => {
  it('sends a reply as one follow-up, reacts to it, and ignores the redelivery', async () => {
    const { root, job } = await startJob();
    const { ts, body } = await h.reply(root.ts, 'Also add a section on auth');
    await eventually(() => h.api.requestsTo('message').length === 1, 'follow-up');
    expect(h.api.requestsTo('message')[0]).toMatchObject({
      path: `/v2/agent/proj_docs/job/${job.id}/message`,
      body: { prompt: 'Also add a section on auth' },
    });
    await eventually(
      () => (h.slack.history(CHANNEL).find((m) => m.ts === ts)?.reactions.length ?? 0) > 0,
      'reaction',
    );
    expect(h.slack.history(CHANNEL).find((m) => m.ts === ts)?.reactions[0]?.name).toBe('eyes');

    // Slack redelivers the same event (same event_id) with X-Slack-Retry-Num.
    const again = await h.deliverEvent(body, 1);
    expect(again.status).toBe(200);
    await sleep(300);
    expect(h.api.requestsTo('message')).toHaveLength(1);
    expect(h.logs).toContain('event.duplicate');
  });

  it('watches a finished job again after a follow-up and announces the new result', async () => {
    const { root, job } = await startJob();
    h.api.complete(job.id, 'https://github.com/acme/docs/pull/1');
    await eventually(() => h.botReplies(root.ts).length === 1, 'first completion');
    await h.reply(root.ts, 'Please also update the changelog');
    await eventually(() => h.api.requestsTo('message').length === 1, 'follow-up');
    await eventually(() => h.api.jobs.get(job.id)?.status === 'active', 'job active again');
    h.api.complete(job.id, 'https://github.com/acme/docs/pull/1');
    await eventually(() => h.botReplies(root.ts).length === 2, 'second completion');
  });

  it('keeps watching when a follow-up may have gone through, and announces what came of it', async () => {
    const { root, job } = await startJob();
    h.api.complete(job.id, 'https://github.com/acme/docs/pull/1');
    await eventually(() => h.botReplies(root.ts).length === 1, 'first completion');
    h.api.inject('message', { status: 500, tookEffect: true });
    await h.reply(root.ts, 'Please also update the changelog');
    // Everyone in the thread is told, once, that it may or may not have arrived.
    const notice = await eventually(() => h.botReplies(root.ts)[1], 'the notice in the thread');
    expect(notice.text).toMatch(/cannot tell whether this reply reached the agent.*answered 500/);
    expect(notice.metadata?.event_payload).toMatchObject({ kind: 'notice' });
    expect(h.api.requestsTo('message')).toHaveLength(1); // not resent
    await eventually(
      () => h.api.requestsTo('get').length > 0 && h.api.jobs.get(job.id)?.status === 'active',
      'job active',
    );
    h.api.complete(job.id, 'https://github.com/acme/docs/pull/1');
    await eventually(() => h.botReplies(root.ts).length === 3, 'the follow-up round announced');
    expect(h.slack.callsTo('chat.postEphemeral')).toHaveLength(0);
  });

  it('ignores bot messages, edits, deletes, joins and replies outside job threads', async () => {
    const { root } = await startJob();
    const other = h.slack.addUserMessage({ channel: CHANNEL, user: 'U0002', text: 'unrelated' });
    const inner = (over: Record<string, unknown>) => ({
      type: 'message',
      channel: CHANNEL,
      user: 'U0001',
      text: 'x',
      ts: uniqueTs(),
      ...over,
    });
    const events = [
      inner({ thread_ts: root.ts, bot_id: 'B0OTHER', subtype: 'bot_message' }),
      inner({ thread_ts: root.ts, bot_id: 'B0OTHER' }),
      inner({
        subtype: 'message_changed',
        message: { text: 'edited', thread_ts: root.ts },
        user: undefined,
      }),
      inner({ subtype: 'message_deleted', deleted_ts: root.ts, user: undefined }),
      inner({ subtype: 'channel_join', thread_ts: undefined }),
      inner({ thread_ts: other.ts }),
      inner({}), // a top-level message
      inner({ thread_ts: '1111111111.000001' }), // a thread the bot never saw
    ];
    for (const e of events) expect((await h.deliverEvent(h.event(e))).status).toBe(200);
    await sleep(300);
    expect(h.api.requestsTo('message')).toHaveLength(0);
    expect(h.slack.callsTo('chat.postEphemeral')).toHaveLength(0);
  });

  it('answers a files-only reply in the thread instead of dropping it', async () => {
    const { root } = await startJob();
    const { ts } = h.slack.addUserMessage({
      channel: CHANNEL,
      user: 'U0001',
      text: '',
      thread_ts: root.ts,
    });
    await h.deliverEvent(
      h.event({
        type: 'message',
        subtype: 'file_share',
        channel: CHANNEL,
        user: 'U0001',
        text: '',
        ts,
        thread_ts: root.ts,
        files: [{ id: 'F1' }],
      }),
    );
    const eph = await h.slack.waitFor((c) => c.method === 'chat.postEphemeral');
    expect(String(eph.args.text)).toContain('only pass text');
    expect(h.api.requestsTo('message')).toHaveLength(0);
  });

  it('tells the person, in the thread, when a follow-up cannot be sent', async () => {
    const { root } = await startJob();
    h.api.inject('message', {
      status: 400,
      details: [{ path: ['prompt'], message: 'Prompt too long' }],
    });
    await h.reply(root.ts, 'way too long');
    const eph = await h.slack.waitFor((c) => c.method === 'chat.postEphemeral');
    expect(eph.args).toMatchObject({ channel: CHANNEL, user: 'U0001', thread_ts: root.ts });
    expect(String(eph.args.text)).toContain('Prompt too long');
    expect(h.logs).toContain('job.message_failed');
  });
});

describe('bad input and failures on /agent', () => {
  it('answers /agent alone and /agent help with usage, ephemerally, and calls nothing', async () => {
    for (const text of ['', '   ', 'help', 'HELP', '?', '--help', '-h', ' ? ']) {
      const ack = await h.command(text);
      expect(ack.body).toMatchObject({
        response_type: 'ephemeral',
        text: expect.stringContaining('Usage'),
      });
    }
    await sleep(100);
    expect(h.api.requests).toHaveLength(0);
    expect(h.slack.callsTo('chat.postMessage')).toHaveLength(0);
  });

  it('answers a malformed command payload plainly and logs it', async () => {
    const fields = slashCommand({ text: 'Add a page', response_url: h.slack.responseUrl() });
    const { user_id: _dropped, ...withoutUser } = fields;
    const res = await postSigned(h.eventsUrl, SECRETS.signingSecret, {
      body: formEncode(withoutUser),
    });
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({
      response_type: 'ephemeral',
      text: expect.stringContaining("couldn't read"),
    });
    expect(h.logs).toContain('command.malformed');
    expect(h.api.requests).toHaveLength(0);
  });

  it('rejects a bad signature and a stale timestamp without acting', async () => {
    const body = formEncode(slashCommand({ text: 'sneaky', response_url: h.slack.responseUrl() }));
    const bad = await postSigned(h.eventsUrl, SECRETS.signingSecret, { body, badSignature: true });
    const stale = await postSigned(h.eventsUrl, SECRETS.signingSecret, {
      body,
      timestampSec: Math.floor(Date.now() / 1000) - 60 * 10,
    });
    expect([bad.status, stale.status]).toEqual([401, 401]);
    await sleep(100);
    expect(h.api.requests).toHaveLength(0);
    expect(h.slack.callsTo('chat.postMessage')).toHaveLength(0);
  });

  it('tells the user to invite the bot when it is not in the channel, and creates no job', async () => {
    h.slack.removeBot(CHANNEL);
    const ack = await h.command('Add a page');
    const reply = await h.slack.waitForResponse((r) => r.id === ack.responseUrl.split('/').pop());
    expect(JSON.stringify(reply.body)).toContain('/invite');
    expect(reply.body).toMatchObject({ response_type: 'ephemeral' });
    expect(h.api.requests).toHaveLength(0);
  });

  it.each([
    [
      '400',
      { status: 400 as const, details: [{ path: ['prompt'], message: 'Prompt is not allowed' }] },
      'Prompt is not allowed',
    ],
    ['401', { status: 401 as const }, 'MINTLIFY_API_KEY'],
    ['403', { status: 403 as const }, 'read-only'],
    ['500', { status: 500 as const }, 'may have started anyway'],
  ])(
    'shows a clear reason in the root message when create answers %s',
    async (_code, fault, expected) => {
      h.api.inject('create', fault);
      await h.command('Add a page');
      const root = await eventually(() => h.roots()[0], 'root');
      await eventually(() => h.slack.callsTo('chat.update').length > 0, 'root update');
      const shown = JSON.stringify(h.slack.history(CHANNEL).find((m) => m.ts === root.ts)?.blocks);
      expect(shown).toContain('Could not start');
      expect(shown).toContain(expected);
      expect(h.api.requestsTo('create')).toHaveLength(1); // a POST is never resent blindly
      for (const secret of Object.values(SECRETS)) {
        expect(h.logs).not.toContain(secret);
        expect(JSON.stringify(h.slack.calls)).not.toContain(secret);
      }
      expect(h.logs).toContain('job.create_failed');
    },
  );

  it('answers a spent budget only to the requester, posting nothing in the channel', async () => {
    const store = await h.openStore();
    const now = Date.now();
    for (let i = 0; i < 100; i++)
      await store.takeBudgetSlot('agent:proj_docs', now - 30 * 60_000 + i, 3_600_000, 100);
    await store.close();
    const asked = await h.command('One job too many');
    const answer = await h.slack.waitForResponse(
      (r) => r.id === asked.responseUrl.split('/').pop(),
    );
    const opens = now - 30 * 60_000 + 3_600_000;
    const text = (answer.body as { text: string }).text;
    expect(answer.body).toMatchObject({ response_type: 'ephemeral' });
    expect(text).toContain('budget (100 jobs and messages per hour) is used up');
    expect(text).toContain(`<!date^${Math.ceil(opens / 1000)}^{time}|`);
    expect(text).toContain(
      `${new Date(Math.ceil(opens / 1000) * 1000).toISOString().slice(11, 16)} UTC>`,
    );
    expect(h.slack.callsTo('chat.postMessage')).toHaveLength(0);
    expect(h.slack.callsTo('chat.update')).toHaveLength(0);
    expect(h.api.requests).toHaveLength(0);
    expect(h.logs).toContain('job.budget_spent');
  });

  it('refuses a thread reply when the budget is spent, telling only its author', async () => {
    const { root } = await startJob();
    const store = await h.openStore();
    for (let i = 0; i < 99; i++)
      await store.takeBudgetSlot('agent:proj_docs', Date.now(), 3_600_000, 100);
    await store.close();
    const posts = h.slack.callsTo('chat.postMessage').length;
    await h.reply(root.ts, 'Also add Ruby');
    const told = await eventually(() => h.slack.callsTo('chat.postEphemeral')[0], 'the refusal');
    expect(told.args).toMatchObject({ user: USER, thread_ts: root.ts });
    expect(String(told.args.text)).toContain('is used up. The next slot opens at');
    expect(h.slack.callsTo('chat.postMessage')).toHaveLength(posts);
    expect(h.api.requestsTo('message')).toHaveLength(0);
  });

  it('answers /agent status with your jobs in progress and the budget, only to you, starting nothing', async () => {
    const { job } = await startJob('Add a quickstart & <b>more</b>');
    const asked = await h.command('status');
    expect(asked.body).toBeNull(); // acked at once; the answer follows through response_url
    const answer = await h.slack.waitForResponse(
      (r) => r.id === asked.responseUrl.split('/').pop(),
    );
    const text = (answer.body as { text: string; response_type: string }).text;
    expect(answer.body).toMatchObject({ response_type: 'ephemeral' });
    expect(text).toContain(
      `<#${CHANNEL}> Working: _Add a quickstart &amp; &lt;b&gt;more&lt;/b&gt;_`,
    );
    expect(text).toContain(job.id);
    expect(text).toContain('99 of 100 uses left');
    expect(h.api.createdJobs()).toHaveLength(1); // "status" was not a prompt

    // With the budget spent, it says when the next use opens (Slack shows it in your time zone).
    const store = await h.openStore();
    const now = Date.now();
    for (let i = 0; i < 99; i++)
      await store.takeBudgetSlot('agent:proj_docs', now - 30 * 60_000 + i, 3_600_000, 100);
    await store.close();
    const again = await h.command('STATUS');
    const spent = await h.slack.waitForResponse((r) => r.id === again.responseUrl.split('/').pop());
    const oldest = Math.ceil((now - 30 * 60_000 + 3_600_000) / 1000);
    expect((spent.body as { text: string }).text).toContain(
      `all 100 uses of the last hour are spent; the next one opens at <!date^${oldest}^{time}|`,
    );
  });

  it('echoes a typed channel ping and a forged link escaped, and gives the agent what was typed', async () => {
    const prompt = 'Fix <!channel> and <https://evil.example|the docs> & more';
    await h.command(prompt); // Slack encodes what was typed
    await eventually(() => h.slack.callsTo('chat.update').length > 0, 'root update');
    const posted = postedArgs();
    expect(posted).not.toContain('<!channel>');
    expect(posted).not.toContain('<https://evil.example|the docs>');
    expect(posted).toContain('&lt;!channel&gt;');
    expect(posted).toContain('&lt;https://evil.example|the docs&gt; &amp; more');
    expect(posted).not.toContain('&amp;lt;'); // not escaped twice
    expect(h.api.requestsTo('create')[0]?.body).toEqual({ prompt });
  });

  it('turns real Slack mentions and links into plain text for the agent, and never pings', async () => {
    // What Slack sends for a typed @channel mention and a pasted, labelled link.
    await h.command('Fix <!channel> and <https://docs.example/a|the docs> &amp; more', {
      raw: true,
    });
    await eventually(() => h.slack.callsTo('chat.update').length > 0, 'root update');
    const posted = postedArgs();
    expect(posted).not.toContain('<!channel>');
    expect(h.api.requestsTo('create')[0]?.body).toEqual({
      prompt: 'Fix @channel and the docs (https://docs.example/a) & more',
    });
  });

  it('sends a thread reply to the agent as typed, not in Slack entities', async () => {
    await h.command('Add a page');
    const root = await eventually(() => h.roots()[0], 'root');
    await eventually(() => h.api.createdJobs()[0], 'job');
    await h.reply(root.ts, 'Wrap it in <Note> & add a tip');
    await eventually(() => h.api.requestsTo('message').length === 1, 'follow-up');
    expect(h.api.requestsTo('message')[0]?.body).toEqual({
      prompt: 'Wrap it in <Note> & add a tip',
    });
  });
});

it('serves /healthz', async () => {
  const res = await fetch(`http://127.0.0.1:${h.env.PORT}/healthz`);
  expect(res.status).toBe(200);
  expect(await res.json()).toMatchObject({ status: 'ok', mode: 'http' });
});
