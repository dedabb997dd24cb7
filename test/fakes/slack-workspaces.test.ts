/**
 * Self-tests for the fake Slack's workspaces (workspaces.ts, gate.ts): each workspace's token
 * sees its own channels and people only, auth.test answers for the token's own workspace,
 * the default workspace is what it always was, and uninstalling revokes the tokens and
 * yields the lifecycle events Slack sends, which Bolt takes signed without authorizing them.
 */
import { App, HTTPReceiver, type Logger } from '@slack/bolt';
import { LogLevel, WebClient } from '@slack/web-api';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { freePort } from '../helpers/net.ts';
import { postSigned } from '../helpers/slack-requests.ts';
import { FakeSlack, SLACK_IDS } from './slack.ts';

const quiet = { logLevel: LogLevel.ERROR, retryConfig: { retries: 0 } };
const refusal = (error: string) => ({ data: { ok: false, error } });

function silentLogger(): Logger {
  const none = () => {};
  const level = () => LogLevel.ERROR;
  return {
    debug: none,
    info: none,
    warn: none,
    error: none,
    setLevel: none,
    getLevel: level,
    setName: none,
  };
}

let slack: FakeSlack;
let alpha: string;
let beta: string;
beforeEach(async () => {
  slack = await FakeSlack.start();
  alpha = slack.addWorkspace({
    team: 'T0A',
    name: 'Alpha',
    botUser: 'U0ABOT',
    channels: ['C0A1'],
    users: ['U0A1'],
  }).botToken;
  beta = slack.addWorkspace({
    team: 'T0B',
    name: 'Beta Corp',
    domain: 'beta',
    enterprise: { id: 'E0B', name: 'Beta Group' },
    botUser: 'U0BBOT',
    channels: ['C0B1'],
    users: ['U0B1'],
  }).botToken;
});
afterEach(() => slack.close());

const clientFor = (token: string) => new WebClient(token, { slackApiUrl: slack.url, ...quiet });

describe('FakeSlack with several workspaces', () => {
  it('gives each workspace its own bot token, and auth.test answers for it', async () => {
    expect(alpha).toMatch(/^xoxb-/);
    expect(beta).not.toBe(alpha);
    expect(await clientFor(alpha).auth.test()).toMatchObject({
      team_id: 'T0A',
      team: 'Alpha',
      user_id: 'U0ABOT',
      bot_id: 'B0ABOT',
      url: 'https://alpha.slack.com/',
      is_enterprise_install: false,
    });
    expect(await clientFor(beta).auth.test()).toMatchObject({
      team_id: 'T0B',
      enterprise_id: 'E0B',
      user_id: 'U0BBOT',
      url: 'https://beta.slack.com/',
    });
    // Any other bot token is the default workspace's, exactly as before.
    const old = await clientFor('xoxb-1-test').auth.test();
    expect(old).toMatchObject({ team_id: SLACK_IDS.team, user_id: SLACK_IDS.botUser });
    expect(old).not.toHaveProperty('enterprise_id');
    // A rotating-looking token the fake never issued is nobody's.
    await expect(clientFor('xoxe.xoxb-1-forged').auth.test()).rejects.toMatchObject(
      refusal('invalid_auth'),
    );
  });

  it("answers channel_not_found for another workspace's channel, as Slack does", async () => {
    const a = clientFor(alpha);
    const posted = await a.chat.postMessage({ channel: 'C0A1', text: 'hello Alpha' });
    expect(posted.message).toMatchObject({ user: 'U0ABOT', bot_id: 'B0ABOT', team: 'T0A' });
    for (const call of [
      () => a.chat.postMessage({ channel: 'C0B1', text: 'x' }),
      () => a.conversations.info({ channel: 'C0B1' }),
      () => a.conversations.history({ channel: 'C0B1' }),
      // The default workspace's channels (any channel no workspace lists) are not Alpha's.
      () => a.chat.postMessage({ channel: 'C0001', text: 'x' }),
      () => clientFor(beta).chat.update({ channel: 'C0A1', ts: posted.ts as string, text: 'x' }),
      () =>
        clientFor(beta).reactions.add({
          channel: 'C0A1',
          timestamp: posted.ts as string,
          name: 'eyes',
        }),
      () => clientFor('xoxb-1-test').chat.postMessage({ channel: 'C0A1', text: 'x' }),
    ])
      await expect(call()).rejects.toMatchObject(refusal('channel_not_found'));
    expect(slack.history('C0B1')).toEqual([]);
    expect(slack.history('C0A1').map((m) => m.text)).toEqual(['hello Alpha']);
    // Nor does it see another workspace's people.
    const home = { type: 'home' as const, blocks: [] };
    await expect(a.views.publish({ user_id: 'U0B1', view: home })).rejects.toMatchObject(
      refusal('user_not_found'),
    );
    await expect(
      a.chat.postEphemeral({ channel: 'C0A1', user: 'U0B1', text: 'x' }),
    ).rejects.toMatchObject(refusal('user_not_in_channel'));
    const trigger = slack.issueTriggerId('U0B1');
    await expect(
      a.views.open({
        trigger_id: trigger,
        view: { type: 'modal', title: { type: 'plain_text', text: 'x' }, blocks: [] },
      }),
    ).rejects.toMatchObject(refusal('invalid_trigger_id'));
    await expect(a.views.publish({ user_id: 'U0A1', view: home })).resolves.toMatchObject({
      ok: true,
    });
  });

  it('uninstalling revokes the tokens and yields tokens_revoked and app_uninstalled', async () => {
    const events = slack.uninstall({ team: 'T0B' });
    expect(events).toMatchObject([
      {
        type: 'event_callback',
        team_id: 'T0B',
        enterprise_id: 'E0B',
        api_app_id: SLACK_IDS.appId,
        event: { type: 'tokens_revoked', tokens: { bot: ['U0BBOT'] } },
        authorizations: [
          { team_id: 'T0B', enterprise_id: 'E0B', user_id: 'U0BBOT', is_enterprise_install: false },
        ],
      },
      { type: 'event_callback', team_id: 'T0B', event: { type: 'app_uninstalled' } },
    ]);
    await expect(clientFor(beta).auth.test()).rejects.toMatchObject(refusal('invalid_auth'));
    await expect(clientFor(alpha).auth.test()).resolves.toMatchObject({ team_id: 'T0A' });
    // Re-installing issues a new token; the old one stays dead.
    const code = slack.authorize({ team: 'T0B', user: 'U0B1', scopes: ['chat:write'] });
    const again = await new WebClient(undefined, {
      slackApiUrl: slack.url,
      ...quiet,
    }).oauth.v2.access({
      client_id: slack.app.clientId,
      client_secret: slack.app.clientSecret,
      code,
    });
    expect(again.access_token).not.toBe(beta);
    await expect(clientFor(again.access_token as string).auth.test()).resolves.toMatchObject({
      team_id: 'T0B',
    });
    expect(() => slack.uninstall({ team: 'T0NONE' })).toThrow(/not installed/);
  });

  it("reach Bolt signed as Slack sends them, unauthorized, naming the install's team and org", async () => {
    const secret = 'signing-secret-for-the-test';
    const receiver = new HTTPReceiver({ signingSecret: secret, logger: silentLogger() });
    const app = new App({
      receiver,
      // No token is left for an ended install: Bolt must not ask for one.
      authorize: async () => {
        throw new Error('authorize was called');
      },
      logger: silentLogger(),
    });
    const seen: { type: string; context: Record<string, unknown>; tokens?: unknown }[] = [];
    app.event('app_uninstalled', async ({ event, context }) => {
      seen.push({ type: event.type, context });
    });
    app.event('tokens_revoked', async ({ event, context }) => {
      seen.push({ type: event.type, context, tokens: event.tokens });
    });
    const port = await freePort();
    await receiver.start(port);
    try {
      for (const event of slack.uninstall({ team: 'T0B' })) {
        const r = await postSigned(`http://127.0.0.1:${port}/slack/events`, secret, {
          body: JSON.stringify(event),
        });
        expect(r.status).toBe(200);
      }
      const where = { teamId: 'T0B', enterpriseId: 'E0B', isEnterpriseInstall: false };
      expect(seen).toMatchObject([
        { type: 'tokens_revoked', context: where, tokens: { bot: ['U0BBOT'] } },
        { type: 'app_uninstalled', context: where },
      ]);
    } finally {
      await receiver.stop();
    }
  });

  it('keeps one workspace apart from another in the Tier 3 update budget', async () => {
    slack.enforceRateLimits({
      postMessage: { perSecond: 100, burst: 100 },
      update: { perMinute: 1, burst: 1 },
    });
    const limited = { slackApiUrl: slack.url, ...quiet, rejectRateLimitedCalls: true };
    const a = new WebClient(alpha, limited);
    const b = new WebClient(beta, limited);
    const inA = await a.chat.postMessage({ channel: 'C0A1', text: 'a' });
    const inB = await b.chat.postMessage({ channel: 'C0B1', text: 'b' });
    await a.chat.update({ channel: 'C0A1', ts: inA.ts as string, text: 'a2' });
    await expect(
      a.chat.update({ channel: 'C0A1', ts: inA.ts as string, text: 'a3' }),
    ).rejects.toMatchObject({
      code: 'slack_webapi_rate_limited_error',
    });
    // Alpha's spent budget does not spend Beta's.
    await expect(
      b.chat.update({ channel: 'C0B1', ts: inB.ts as string, text: 'b2' }),
    ).resolves.toMatchObject({
      ok: true,
    });
  });
});
