import { LogLevel, WebClient } from '@slack/web-api';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FakeSlack } from '../fakes/slack.ts';
import { USER } from '../helpers/harness.ts';
import { answerWaits, type SentCommand, type SentReply } from './answer-wait.ts';

/**
 * The chaos summary's `maxAnswerWaitMs`: the first thing a person saw, read from what the
 * fake Slack recorded. Times are taken from the recordings themselves, so nothing here
 * depends on how fast the machine is.
 */
describe('answerWaits', () => {
  let slack: FakeSlack;
  let client: WebClient;
  beforeEach(async () => {
    slack = await FakeSlack.start();
    client = new WebClient('xoxb-1-test', {
      slackApiUrl: slack.url,
      retryConfig: { retries: 0 },
      logLevel: LogLevel.ERROR,
    });
  });
  afterEach(() => slack.close());

  const command = (prompt: string, at: number, channel = 'C1'): SentCommand => {
    const url = slack.responseUrl();
    return { prompt, channel, at, responseId: url.split('/').at(-1) ?? '' };
  };
  const at = (method: string, n = 0) => slack.callsTo(method)[n]?.at ?? Number.NaN;

  it('takes the earliest of root post, response_url and ephemeral for a command', async () => {
    const t0 = Date.now() - 5_000;
    const a = command('first', t0);
    const b = command('second', t0 + 1_000);
    await client.chat.postMessage({ channel: 'C1', text: 'Starting: docs agent job: first' });
    await fetch(`${slack.url.replace(/api\/$/, '')}response/${a.responseId}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ text: 'later, and not the first thing seen' }),
    });
    await client.chat.postEphemeral({ channel: 'C1', user: USER, text: 'busy, try again' });
    const w = answerWaits(slack, [a, b], []);
    const waitA = at('chat.postMessage') - a.at;
    const waitB = at('chat.postEphemeral') - b.at;
    expect(w).toMatchObject({ answered: 2, sent: 2, maxMs: Math.max(waitA, waitB) });
    expect(w.worst).toContain(waitA > waitB ? '"first" in C1 (first: root post)' : 'ephemeral');
  });

  it('takes an ack with text as the answer', () => {
    const c = { ...command('usage', 1_000), ackTextAt: 1_250 };
    expect(answerWaits(slack, [c], [])).toMatchObject({ answered: 1, maxMs: 250 });
  });

  it('takes the receipt reaction or a notice naming the reply; counts a reply never answered', async () => {
    const { ts: root } = await client.chat.postMessage({ channel: 'C1', text: 'root' });
    const t0 = Date.now() - 3_000;
    const one = slack.addUserMessage({ channel: 'C1', user: USER, text: 'a', thread_ts: root });
    const two = slack.addUserMessage({ channel: 'C1', user: USER, text: 'b', thread_ts: root });
    const three = slack.addUserMessage({ channel: 'C1', user: USER, text: 'c', thread_ts: root });
    const reply = (ts: string, dt: number): SentReply => ({
      channel: 'C1',
      threadTs: root as string,
      ts,
      at: t0 + dt,
    });
    await client.reactions.add({ channel: 'C1', timestamp: one.ts, name: 'eyes' });
    await client.chat.postMessage({
      channel: 'C1',
      thread_ts: root as string,
      text: 'may not have gone through',
      metadata: {
        event_type: 'docs_agent_announcement',
        event_payload: { key: `reply:${two.ts}` },
      },
    });
    const w = answerWaits(slack, [], [reply(one.ts, 0), reply(two.ts, 100), reply(three.ts, 200)]);
    const waits = [at('reactions.add') - t0, at('chat.postMessage', 1) - (t0 + 100)];
    expect(w).toMatchObject({ answered: 2, sent: 3, maxMs: Math.max(...waits) });
  });

  it('is zero with nothing answered', () => {
    expect(answerWaits(slack, [command('x', 0)], [])).toEqual({
      maxMs: 0,
      answered: 0,
      sent: 1,
      worst: undefined,
    });
  });
});
