/**
 * Self-tests for the Slack fakes, driven by Slack's own clients (not our app): if @slack/web-api
 * and @slack/socket-mode are happy talking to the fakes, the app's integration tests are honest.
 * This file: FakeSlack through WebClient; slack-wire.test.ts: the raw wire and signed requests;
 * socket-mode.test.ts: FakeSocketMode.
 */
import { LogLevel, WebClient } from '@slack/web-api';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { latencyProfile } from './latency.ts';
import { FakeSlack } from './slack.ts';

const BOT_TOKEN = 'xoxb-1-test';
const quiet = { logLevel: LogLevel.ERROR };

describe('FakeSlack with @slack/web-api', () => {
  let slack: FakeSlack;
  let client: WebClient;
  beforeEach(async () => {
    slack = await FakeSlack.start();
    client = new WebClient(BOT_TOKEN, {
      slackApiUrl: slack.url,
      retryConfig: { retries: 0 },
      ...quiet,
    });
  });
  afterEach(() => slack.close());

  it('describes channels with conversations.info as Slack answers a bot', async () => {
    const info = (channel: string) => client.conversations.info({ channel });
    expect((await info('C1')).channel).toMatchObject({
      id: 'C1',
      is_member: true,
      is_private: false,
    });
    slack.removeBot('C1');
    slack.nameChannel('C1', 'docs-traffic');
    // A public channel without the bot is still described, as not joined.
    expect((await info('C1')).channel).toMatchObject({ name: 'docs-traffic', is_member: false });
    // A private one without the bot, and a deleted one, do not exist for it.
    slack.removeBot('G1');
    await expect(info('G1')).rejects.toMatchObject({ data: { error: 'channel_not_found' } });
    slack.deleteChannel('C2');
    await expect(info('C2')).rejects.toMatchObject({ data: { error: 'channel_not_found' } });
    await expect(client.chat.postMessage({ channel: 'C2', text: 'x' })).rejects.toMatchObject({
      data: { error: 'channel_not_found' },
    });
    // Once scopes are granted, the read scope is required.
    slack.grantScopes(['chat:write']);
    await expect(info('C1')).rejects.toMatchObject({
      data: { error: 'missing_scope', needed: 'channels:read' },
    });
  });

  it('removes only reactions the bot added, as Slack does', async () => {
    const { ts } = await client.chat.postMessage({ channel: 'C1', text: 'root' });
    const at = { channel: 'C1', timestamp: ts as string };
    await expect(client.reactions.remove({ ...at, name: 'x' })).rejects.toMatchObject({
      data: { error: 'no_reaction' },
    });
    await client.reactions.add({ ...at, name: 'x' });
    await client.reactions.remove({ ...at, name: 'x' });
    expect(slack.history('C1')[0]?.reactions).toEqual([]);
    await expect(
      client.reactions.remove({ channel: 'C1', timestamp: '1.000001', name: 'x' }),
    ).rejects.toMatchObject({ data: { error: 'message_not_found' } });
  });

  it('opens a modal once per fresh trigger id, and checks the view', async () => {
    const view = {
      type: 'modal' as const,
      title: { type: 'plain_text' as const, text: 'Send a follow-up' },
      submit: { type: 'plain_text' as const, text: 'Send' },
      blocks: [
        {
          type: 'input' as const,
          block_id: 'b',
          label: { type: 'plain_text' as const, text: 'Text' },
          element: { type: 'plain_text_input' as const, action_id: 'a' },
        },
      ],
    };
    const error = (p: Promise<unknown>) =>
      p.then(
        () => 'ok',
        (e) => e.data?.error,
      );
    expect(await error(client.views.open({ trigger_id: 'made.up', view }))).toBe(
      'invalid_trigger_id',
    );
    const old = slack.issueTriggerId('U1', Date.now() - 4_000);
    expect(await error(client.views.open({ trigger_id: old, view }))).toBe('expired_trigger_id');
    const long = {
      ...view,
      title: { type: 'plain_text' as const, text: 'A title far too long for it' },
    };
    const fresh = slack.issueTriggerId('U1');
    expect(await error(client.views.open({ trigger_id: fresh, view: long }))).toBe(
      'invalid_arguments',
    );
    const { submit: _, ...noSubmit } = view;
    expect(await error(client.views.open({ trigger_id: fresh, view: noSubmit }))).toBe(
      'invalid_arguments',
    );
    const res = await client.views.open({ trigger_id: fresh, view });
    expect(res.view?.id).toMatch(/^V/);
    expect(slack.views).toEqual([
      { view: expect.objectContaining({ id: res.view?.id }), user: 'U1' },
    ]);
    expect(await error(client.views.open({ trigger_id: fresh, view }))).toBe(
      'exchanged_trigger_id',
    );
  });

  it('lists a thread within latest / oldest, their own ts only when inclusive', async () => {
    const root = slack.addUserMessage({ channel: 'C1', user: 'U1', text: 'root' });
    const a = slack.addUserMessage({ channel: 'C1', user: 'U2', text: 'a', thread_ts: root.ts });
    const b = slack.addUserMessage({ channel: 'C1', user: 'U3', text: 'b', thread_ts: root.ts });
    slack.addUserMessage({ channel: 'C1', user: 'U2', text: 'c', thread_ts: root.ts });
    const texts = async (args: { latest?: string; oldest?: string; inclusive?: boolean }) =>
      (await client.conversations.replies({ channel: 'C1', ts: root.ts, ...args })).messages?.map(
        (m) => m.text,
      );
    expect(await texts({ latest: b.ts })).toEqual(['root', 'a']);
    expect(await texts({ latest: b.ts, inclusive: true })).toEqual(['root', 'a', 'b']);
    expect(await texts({ oldest: a.ts })).toEqual(['b', 'c']);
    expect(await texts({})).toEqual(['root', 'a', 'b', 'c']);
  });

  it('posts with blocks + metadata, updates, reads the thread back and reacts', async () => {
    const root = slack.addUserMessage({ channel: 'C1', user: 'U1', text: '<@UBOT> fix the docs' });
    const blocks = [{ type: 'section', text: { type: 'mrkdwn', text: '*Working on it*' } }];
    const metadata = { event_type: 'agent_job', event_payload: { job_id: 'job_1' } };
    const posted = await client.chat.postMessage({
      channel: 'C1',
      thread_ts: root.ts,
      text: 'Working on it',
      blocks,
      metadata,
    });
    expect(posted.ok).toBe(true);
    expect(posted.ts).toMatch(/^\d{10}\.\d{6}$/);
    expect(Number(posted.ts)).toBeGreaterThan(Number(root.ts));
    // Form-encoded JSON fields are decoded in the recording.
    const call = await slack.waitFor((c) => c.method === 'chat.postMessage');
    expect(call.args).toMatchObject({ channel: 'C1', blocks, metadata, thread_ts: root.ts });
    expect(call.response).toEqual(JSON.parse(JSON.stringify(call.response)));

    const updated = await client.chat.update({ channel: 'C1', ts: posted.ts!, text: 'Done' });
    expect(updated).toMatchObject({ ok: true, channel: 'C1', ts: posted.ts, text: 'Done' });

    const withMeta = await client.conversations.replies({
      channel: 'C1',
      ts: root.ts,
      include_all_metadata: true,
    });
    expect(withMeta.messages?.map((m) => m.text)).toEqual(['<@UBOT> fix the docs', 'Done']);
    expect(withMeta.messages?.[0]).toMatchObject({ reply_count: 1, thread_ts: root.ts });
    expect(withMeta.messages?.[1]).toMatchObject({
      metadata,
      bot_id: 'BBOT',
      parent_user_id: 'U1',
    });
    // Blocks survive the update (only text was sent) and gained a block_id, as in Slack.
    expect(withMeta.messages?.[1]?.blocks?.[0]).toMatchObject({
      ...blocks[0],
      block_id: expect.any(String),
    });
    const noMeta = await client.conversations.replies({ channel: 'C1', ts: posted.ts! });
    expect(noMeta.messages).toHaveLength(2); // a reply's ts resolves to the whole thread
    expect(noMeta.messages?.[1]?.metadata).toBeUndefined();

    await client.reactions.add({ channel: 'C1', timestamp: root.ts, name: 'eyes' });
    await expect(
      client.reactions.add({ channel: 'C1', timestamp: root.ts, name: 'eyes' }),
    ).rejects.toMatchObject({
      code: 'slack_webapi_platform_error',
      data: { error: 'already_reacted' },
    });
    await expect(
      client.reactions.add({ channel: 'C1', timestamp: '1.000001', name: 'eyes' }),
    ).rejects.toMatchObject({ data: { error: 'message_not_found' } });
    const reply = slack.addUserMessage({
      channel: 'C1',
      user: 'U2',
      text: 'thanks',
      thread_ts: root.ts,
    });
    await client.reactions.add({ channel: 'C1', timestamp: reply.ts, name: 'white_check_mark' });
    expect(slack.thread('C1', root.ts).at(-1)?.reactions).toEqual([
      { name: 'white_check_mark', users: ['UBOT'] },
    ]);
  });

  it('refuses like Slack: not_in_channel, no_text, bad tokens, invalid blocks, unknown methods', async () => {
    slack.removeBot('C2');
    const err = await client.chat
      .postMessage({ channel: 'C2', text: 'hi' })
      .catch((e: unknown) => e);
    expect(err).toMatchObject({
      code: 'slack_webapi_platform_error',
      data: { ok: false, error: 'not_in_channel' },
    });
    expect(slack.callsTo('chat.postMessage')[0]?.response).toEqual({
      ok: false,
      error: 'not_in_channel',
    });

    await expect(client.chat.postMessage({ channel: 'C1', text: '' })).rejects.toMatchObject({
      data: { error: 'no_text' },
    });
    const tooLong = [{ type: 'section', text: { type: 'mrkdwn', text: 'x'.repeat(3001) } }];
    await expect(
      client.chat.postMessage({ channel: 'C1', text: 'x', blocks: tooLong }),
    ).rejects.toMatchObject({
      data: { error: 'invalid_blocks' },
    });
    await expect(
      client.chat.update({ channel: 'C1', ts: '1.000001', text: 'x' }),
    ).rejects.toMatchObject({
      data: { error: 'message_not_found' },
    });
    const appClient = new WebClient('xapp-1-x', { slackApiUrl: slack.url, ...quiet });
    await expect(appClient.chat.postMessage({ channel: 'C1', text: 'x' })).rejects.toMatchObject({
      data: { error: 'not_allowed_token_type' },
    });
    await expect(client.apps.connections.open()).rejects.toMatchObject({
      data: { error: 'not_allowed_token_type' },
    });
    const badClient = new WebClient('nope', { slackApiUrl: slack.url, ...quiet });
    await expect(badClient.auth.test()).rejects.toMatchObject({ data: { error: 'invalid_auth' } });
    await expect(client.apiCall('chat.frobnicate')).rejects.toMatchObject({
      data: { error: 'unknown_method' },
    });
    expect(await client.auth.test()).toMatchObject({
      ok: true,
      team_id: 'T0001',
      user_id: 'UBOT',
      bot_id: 'BBOT',
    });
    // An ephemeral is not channel history.
    await client.chat.postEphemeral({ channel: 'C1', user: 'U1', text: 'only you' });
    expect(slack.ephemerals).toHaveLength(1);
    expect(slack.history('C1')).toHaveLength(0);
  });

  it('answers 429 with Retry-After and the client waits and retries', async () => {
    const retrying = new WebClient(BOT_TOKEN, {
      slackApiUrl: slack.url,
      retryConfig: { retries: 1, minTimeout: 0, maxTimeout: 0 },
      ...quiet,
    });
    slack.failNext('chat.postMessage', { status: 429, retryAfterSec: 1 });
    const started = Date.now();
    const res = await retrying.chat.postMessage({ channel: 'C1', text: 'hello' });
    expect(res.ok).toBe(true);
    expect(Date.now() - started).toBeGreaterThanOrEqual(1000);
    const [limited, ok] = slack.callsTo('chat.postMessage');
    expect(limited).toMatchObject({ status: 429, response: { ok: false, error: 'ratelimited' } });
    expect(ok?.status).toBe(200);
    expect(ok!.seq).toBeGreaterThan(limited!.seq);

    slack.failNext('chat.update', { error: 'internal_error' });
    await expect(
      retrying.chat.update({ channel: 'C1', ts: res.ts!, text: 'x' }),
    ).rejects.toMatchObject({
      data: { error: 'internal_error' },
    });
    slack.failNext('auth.test', { status: 503 });
    await expect(client.auth.test()).rejects.toMatchObject({
      code: 'slack_webapi_http_error',
      statusCode: 503,
    });
  });

  it("enforces Slack's limits when asked: posts per channel, updates per workspace", async () => {
    const strict = new WebClient(BOT_TOKEN, {
      slackApiUrl: slack.url,
      rejectRateLimitedCalls: true,
      retryConfig: { retries: 0 },
      ...quiet,
    });
    const post = (channel: string) => strict.chat.postMessage({ channel, text: 'hi' });
    // Off by default: a burst goes through.
    for (let i = 0; i < 5; i++) await post('C0');
    let t = 1_000_000;
    slack.enforceRateLimits(undefined, () => t);
    // A burst of three in one channel, then 429 with Retry-After; another channel is not held.
    for (let i = 0; i < 3; i++) await post('C1');
    await expect(post('C1')).rejects.toMatchObject({ code: 'slack_webapi_rate_limited_error' });
    const limited = slack.callsTo('chat.postMessage').at(-1);
    expect(limited).toMatchObject({ status: 429, response: { ok: false, error: 'ratelimited' } });
    await post('C2');
    expect(slack.history('C1')).toHaveLength(3); // the refused call did nothing
    t += 999;
    await expect(post('C1')).rejects.toMatchObject({ retryAfter: 1 });
    t += 1;
    await post('C1'); // one a second, refused calls not counted
    await expect(post('C1')).rejects.toMatchObject({ retryAfter: 1 });

    // chat.update: Tier 3 for the whole workspace, a burst of ten, then 50 a minute.
    const { ts } = await post('C3');
    const update = (text: string) => strict.chat.update({ channel: 'C3', ts: ts!, text });
    for (let i = 0; i < 10; i++) await update(`v${i}`);
    await expect(update('late')).rejects.toMatchObject({ retryAfter: 2 }); // 1.2 s, whole seconds
    await post('C4'); // posts are not held by the updates' budget
    t += 1_200;
    await update('v10');
    expect(slack.history('C3')[0]?.text).toBe('v10');
    expect(slack.callsTo('chat.update').filter((c) => c.status === 429)).toHaveLength(1);

    slack.enforceRateLimits(false);
    for (let i = 0; i < 5; i++) await post('C1');
  });

  it('takes a filesUploadV2 upload into files and shares it in the thread', async () => {
    const root = slack.addUserMessage({ channel: 'C1', user: 'U1', text: 'report please' });
    const bytes = Buffer.from('# Report\n\nAll good.\n');
    const res = await client.filesUploadV2({
      channel_id: 'C1',
      thread_ts: root.ts,
      file: bytes,
      filename: 'report.md',
      title: 'Weekly report',
      initial_comment: 'Here you go',
    });
    expect(res.ok).toBe(true);
    const [stored] = [...slack.files.values()];
    expect(stored?.bytes.equals(bytes)).toBe(true);
    expect(stored).toMatchObject({ name: 'report.md', title: 'Weekly report' });
    expect(slack.callsTo('upload_url')[0]).toMatchObject({
      status: 200,
      args: { bytes: bytes.length },
    });
    const share = slack.thread('C1', root.ts).at(-1);
    expect(share).toMatchObject({ text: 'Here you go', user: 'UBOT', files: [{ id: stored?.id }] });
  });

  it('records response_url posts, and waitFor explains what it did see', async () => {
    const url = slack.responseUrl('abc');
    const post = (body: unknown) =>
      fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    const waiting = slack.waitForResponse((r) => r.id === 'abc');
    expect((await post({ text: 'Started', response_type: 'ephemeral' })).status).toBe(200);
    expect((await waiting).body).toEqual({ text: 'Started', response_type: 'ephemeral' });
    expect((await post({})).status).toBe(400); // no_text
    const unknown = await fetch(url.replace('abc', 'zzz'), {
      method: 'POST',
      body: '{"text":"x"}',
    });
    expect(unknown.status).toBe(404);

    await client.auth.test();
    await expect(slack.waitFor((c) => c.method === 'chat.postMessage', 50)).rejects.toThrow(
      /auth\.test/,
    );
  });

  it('holds answers back by the latency profile, with jitter, response_url posts too', async () => {
    slack.useLatency(latencyProfile('realistic'));
    slack.setLatency('auth.test', 0); // a method of its own overrides the profile
    const url = slack.responseUrl('late');
    await Promise.all([
      ...Array.from({ length: 8 }, (_, i) =>
        client.chat.postMessage({ channel: 'C1', text: `m${i}` }),
      ),
      fetch(url, { method: 'POST', body: JSON.stringify({ text: 'Started' }) }),
      client.auth.test(),
    ]);
    const posted = slack.callsTo('chat.postMessage').map((c) => c.delayMs);
    for (const d of [...posted, slack.responses[0]!.delayMs]) {
      expect(d).toBeGreaterThanOrEqual(80);
      expect(d).toBeLessThanOrEqual(120);
    }
    expect(new Set(posted).size).toBeGreaterThan(1); // jittered, not one fixed delay
    expect(slack.callsTo('auth.test')[0]?.delayMs).toBe(0);

    // Deterministic: reseeded, the same calls get the same delays again.
    slack.seedLatency(1);
    for (let i = 0; i < 8; i++)
      await client.chat.postMessage({ channel: 'C1', text: `again ${i}` });
    expect(
      slack
        .callsTo('chat.postMessage')
        .slice(8)
        .map((c) => c.delayMs),
    ).toEqual(posted);
  });

  it('answers a slow method after a fast one sent later (the delay is real)', async () => {
    slack.setLatency('chat.postMessage', { ms: 300, jitter: 0.2 });
    const order: string[] = [];
    const slow = client.chat
      .postMessage({ channel: 'C1', text: 'slow' })
      .then(() => order.push('post'));
    await slack.waitForCalls('chat.postMessage', 1); // it took effect at once
    await client.auth.test().then(() => order.push('auth'));
    await slow;
    expect(order).toEqual(['auth', 'post']);
  });
});
