/**
 * Self-tests for the Slack fakes on the raw wire (plain fetch, no Slack client), and for the
 * signed requests the tests send to the app as Slack would (see slack.test.ts).
 */
import { readFile, rm } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isValidSlackRequest } from '@slack/bolt';
import { describe, expect, it } from 'vitest';
import {
  formEncode,
  messageEvent,
  postSigned,
  signSlackRequest,
  slashCommand,
} from '../helpers/slack-requests.ts';
import { FakeSlack } from './slack.ts';

const BOT_TOKEN = 'xoxb-1-test';

describe('FakeSlack raw wire', () => {
  it('takes JSON posts, wants a token, and dumps the viewer format', async () => {
    const slack = await FakeSlack.start();
    const post = (token: string | undefined, body: unknown) =>
      fetch(`${slack.url}chat.postMessage`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json; charset=utf-8',
          ...(token ? { authorization: `Bearer ${token}` } : {}),
        },
        body: JSON.stringify(body),
      }).then((r) => r.json());
    expect(await post(undefined, { channel: 'C1', text: 'x' })).toEqual({
      ok: false,
      error: 'not_authed',
    });
    const waiting = slack.waitForCalls('chat.postMessage', 2);
    expect(await post(BOT_TOKEN, { channel: 'C1', text: 'x' })).toMatchObject({
      ok: true,
      channel: 'C1',
    });
    expect((await waiting).map((c) => c.seq)).toEqual([1, 2]);
    slack.addUserMessage({ channel: 'C1', user: 'U1', text: 'hi' });
    const file = join(tmpdir(), `fake-slack-${process.pid}.json`);
    await slack.dump(file);
    const dumped = JSON.parse(await readFile(file, 'utf8'));
    expect(dumped.calls[1]).toMatchObject({
      method: 'chat.postMessage',
      args: { channel: 'C1' },
      seq: 2,
    });
    expect(dumped.messages).toMatchObject([{ user: 'U1', text: 'hi' }]);
    expect(dumped).toMatchObject({ responses: [], files: [] });
    await rm(file);
    await slack.close();
  });
});

describe('signed requests (Bolt HTTP receiver side)', () => {
  it("signs as Bolt's verifier expects and sends Slack's headers", async () => {
    const body = formEncode(
      slashCommand({ text: 'fix typo', response_url: 'http://127.0.0.1:1/r' }),
    );
    const valid = (h: Record<string, string | undefined>) =>
      isValidSlackRequest({
        signingSecret: 'shh',
        body,
        headers: {
          'x-slack-signature': h['x-slack-signature'] ?? '',
          'x-slack-request-timestamp': Number(h['x-slack-request-timestamp']),
        },
      });
    expect(valid(signSlackRequest('shh', body))).toBe(true);
    expect(valid(signSlackRequest('other', body))).toBe(false);

    const seen: Record<string, string | undefined>[] = [];
    const server = createServer((req, res) => {
      seen.push(req.headers as Record<string, string | undefined>);
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/slack/events`;
    const res = await postSigned(url, 'shh', { body, retryNum: 1, retryReason: 'http_timeout' });
    await postSigned(url, 'shh', { body, badSignature: true });
    server.close();
    expect(res).toEqual({ status: 200, text: '{"ok":true}', json: { ok: true } });
    expect(seen[0]).toMatchObject({
      'content-type': 'application/x-www-form-urlencoded',
      'x-slack-retry-num': '1',
      'x-slack-retry-reason': 'http_timeout',
    });
    expect(valid(seen[0] ?? {})).toBe(true);
    expect(valid(seen[1] ?? {})).toBe(false);
    const event = messageEvent({
      channel: 'C1',
      text: 'hi',
      ts: '1.000100',
      thread_ts: '1.000001',
    });
    expect(event).toMatchObject({
      type: 'event_callback',
      team_id: 'T0001',
      authorizations: [{ user_id: 'UBOT', is_bot: true }],
      event: {
        type: 'message',
        channel: 'C1',
        ts: '1.000100',
        event_ts: '1.000100',
        parent_user_id: 'U0001',
      },
    });
  });
});
