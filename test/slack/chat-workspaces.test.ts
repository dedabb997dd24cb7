import { LogLevel, WebClient } from '@slack/web-api';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ChatError } from '../../src/chat-errors.ts';
import { webClientOptions } from '../../src/slack/app.ts';
import { createSlackJobChat } from '../../src/slack/chat.ts';
import type { ClientSource } from '../../src/slack/workspace-clients.ts';
import type { JobThread, WorkspaceRef } from '../../src/store/types.ts';
import { FakeSlack } from '../fakes/slack.ts';
import { memoryLogger } from '../helpers/log.ts';

/**
 * The jobs' chat port asks for each call's workspace client, and tells the source when Slack
 * refused that client's token, so that it is not handed out again; a token past its time is
 * worth asking again for (the source refreshes it). Against the fake Slack's workspaces.
 */
let slack: FakeSlack;
beforeEach(async () => {
  slack = await FakeSlack.start();
});
afterEach(async () => {
  await slack.close();
});

const ALPHA = { team: 'T0A', name: 'Alpha', botUser: 'U0ABOT', channels: ['C0A1'] };
const BETA = { team: 'T0B', name: 'Beta', botUser: 'U0BBOT', channels: ['C0B1'] };

function source(tokens: Record<string, string>) {
  const asked: string[] = [];
  const refused: { teamId: string; token: string | undefined }[] = [];
  const clients = new Map<string, WebClient>();
  const s: ClientSource = {
    clientFor: async (ws: WorkspaceRef) => {
      asked.push(ws.teamId);
      const token = tokens[ws.teamId] ?? '';
      const client =
        clients.get(token) ??
        new WebClient(token, { ...webClientOptions(slack.url, 2_000), logLevel: LogLevel.ERROR });
      clients.set(token, client);
      return client;
    },
    refused: (ws, client) => refused.push({ teamId: ws.teamId, token: client.token }),
  };
  return { s, asked, refused };
}

const thread = (teamId: string, channelId: string, threadTs: string): JobThread => ({
  id: 1,
  teamId,
  channelId,
  threadTs,
  rootTs: threadTs,
  userId: 'U1',
  prompt: 'Add a page',
  jobId: 'job_1',
  status: 'completed',
  model: null,
  repository: null,
  ref: null,
  prLink: 'https://github.com/acme/docs/pull/1',
  error: null,
  round: 0,
  followUpAt: null,
  rootVersion: 2,
  rootShownVersion: 1,
  nextPollAt: null,
  pollIntervalMs: 1,
  createdAt: 0,
  updatedAt: 0,
  pollFailingSince: null,
  changedAt: null,
  projectId: null,
  contextMessages: null,
});
const done = {
  key: 'k1',
  kind: 'completed' as const,
  prLink: 'https://github.com/acme/docs/pull/1',
};

describe('the jobs chat port across workspaces', () => {
  it("posts each thread's calls with its workspace's client, and drops a token Slack refused", async () => {
    const a = slack.addWorkspace(ALPHA);
    const b = slack.addWorkspace(BETA);
    const { s, asked, refused } = source({ T0A: a.botToken, T0B: b.botToken });
    const chat = createSlackJobChat(s, memoryLogger().log);
    const rootA = await chat.postRoot(
      { teamId: 'T0A' },
      { channelId: 'C0A1', userId: 'U1', prompt: 'p', marker: 'm1' },
    );
    const rootB = await chat.postRoot(
      { teamId: 'T0B' },
      { channelId: 'C0B1', userId: 'U1', prompt: 'p', marker: 'm2' },
    );
    await chat.announce(thread('T0A', 'C0A1', rootA.ts), done);
    await chat.announce(thread('T0B', 'C0B1', rootB.ts), { ...done, key: 'k2' });
    expect(
      slack.callsTo('chat.postMessage').map((c) => [c.args.channel, c.team, c.status]),
    ).toEqual([
      ['C0A1', 'T0A', 200],
      ['C0B1', 'T0B', 200],
      ['C0A1', 'T0A', 200],
      ['C0B1', 'T0B', 200],
    ]);
    expect(asked).toEqual(['T0A', 'T0B', 'T0A', 'T0B']);
    expect(refused).toEqual([]);

    // Alpha's token past its time: worth asking again for; Beta's revoked: not.
    slack.expireToken(a.botToken);
    slack.revokeToken(b.botToken);
    const expired = await chat
      .announce(thread('T0A', 'C0A1', rootA.ts), { ...done, key: 'k3' })
      .catch((e: unknown) => e as ChatError);
    const revoked = await chat
      .announce(thread('T0B', 'C0B1', rootB.ts), { ...done, key: 'k4' })
      .catch((e: unknown) => e as ChatError);
    expect([expired?.code, expired?.retryable]).toEqual(['token_expired', true]);
    expect([revoked?.code, revoked?.retryable]).toEqual(['invalid_auth', false]);
    expect(refused).toEqual([
      { teamId: 'T0A', token: a.botToken },
      { teamId: 'T0B', token: b.botToken },
    ]);
  });
});
