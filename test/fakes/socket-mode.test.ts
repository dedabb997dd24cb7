/**
 * Self-tests for FakeSocketMode, driven by @slack/socket-mode: Slack's own client must be happy
 * talking to it (see slack.test.ts).
 */
import { SocketModeClient } from '@slack/socket-mode';
import { LogLevel } from '@slack/web-api';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { latencyProfile } from './latency.ts';
import { FakeSlack } from './slack.ts';
import { FakeSocketMode } from './socket-mode.ts';

const quiet = { logLevel: LogLevel.ERROR };

describe('FakeSocketMode with @slack/socket-mode', () => {
  let socket: FakeSocketMode;
  let slack: FakeSlack;
  let client: SocketModeClient | undefined;
  beforeEach(async () => {
    socket = await FakeSocketMode.start();
    slack = await FakeSlack.start({ socketMode: socket });
  });
  afterEach(async () => {
    await client?.disconnect();
    await slack.close();
    await socket.close();
  });

  it('connects through apps.connections.open, delivers an envelope, gets the ack, reconnects', async () => {
    client = new SocketModeClient({
      appToken: 'xapp-1-test',
      clientOptions: { slackApiUrl: slack.url },
      clientPingTimeout: 300, // also the reconnect delay: keep the test fast
      ...quiet,
    });
    const seen: unknown[] = [];
    client.on('slash_commands', async ({ ack, body }) => {
      seen.push(body);
      await ack({ text: 'On it' });
    });
    await client.start();
    expect(slack.callsTo('apps.connections.open')).toHaveLength(1);

    const payload = { command: '/agent', text: 'fix typo', channel_id: 'C1', user_id: 'U1' };
    const ack = await socket.send('slash_commands', payload);
    expect(ack).toEqual({ envelope_id: socket.sent[0]?.envelope_id, payload: { text: 'On it' } });
    expect(seen).toEqual([payload]);
    expect(socket.sent[0]).toMatchObject({
      type: 'slash_commands',
      accepts_response_payload: true,
    });
    expect(socket.acks[0]?.latencyMs).toBeLessThan(3000);

    socket.disconnect('refresh_requested');
    await socket.waitForConnection(3000);
    expect(socket.connections).toBe(2);
    expect(slack.callsTo('apps.connections.open')).toHaveLength(2); // fresh ticket, not a reused URL
    const again = await socket.send('slash_commands', { ...payload, text: 'again' });
    expect(again.envelope_id).toBe(socket.sent[1]?.envelope_id);
  });

  it('delivers envelopes late by their latency: a slow type arrives after a later fast one', async () => {
    client = new SocketModeClient({
      appToken: 'xapp-1-test',
      clientOptions: { slackApiUrl: slack.url },
      ...quiet,
    });
    const seen: string[] = [];
    client.on('slash_commands', async ({ ack }) => {
      seen.push('command');
      await ack();
    });
    client.on('message', async ({ ack }) => {
      seen.push('event');
      await ack();
    });
    await client.start();
    socket.useLatency(latencyProfile('zero'));
    socket.setLatency('events_api', { ms: 300, jitter: 0.2 });
    const event = socket.send('events_api', { event: { type: 'message' } });
    await socket.send('slash_commands', { command: '/agent', text: 'x' });
    await event;
    expect(seen).toEqual(['command', 'event']);
  });

  it('refuses a reused connection URL, as Slack tickets are single-use', async () => {
    const url = socket.connectionUrl();
    const first = new WebSocket(url);
    await new Promise((resolve) => first.addEventListener('message', resolve, { once: true }));
    const second = new WebSocket(url);
    const outcome = await new Promise((resolve) => {
      second.addEventListener('open', () => resolve('open'));
      second.addEventListener('error', () => resolve('refused'));
    });
    expect(outcome).toBe('refused');
    first.close();
  });
});
