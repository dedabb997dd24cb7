/**
 * Self-tests for the fake Slack's OAuth (oauth.ts): codes from the Allow page exchanged with
 * oauth.v2.access through @slack/web-api, Slack's refusals, token rotation and expiry; then
 * Bolt's own OAuth flow (its install page, state cookie, callback and token refresh) run
 * against the fake end to end.
 */
import { HTTPReceiver, type Logger, LogLevel, MemoryInstallationStore } from '@slack/bolt';
import { WebClient } from '@slack/web-api';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { freePort } from '../helpers/net.ts';
import { FakeSlack, SLACK_APP } from './slack.ts';

const quiet = { logLevel: LogLevel.ERROR, retryConfig: { retries: 0 } };
const REDIRECT = 'https://bot.example/slack/oauth_redirect';
const SCOPES = ['chat:write', 'commands', 'reactions:write'];

let slack: FakeSlack;
beforeEach(async () => {
  slack = await FakeSlack.start();
  slack.configureApp({ redirectUrls: [REDIRECT] });
  slack.addWorkspace({
    team: 'T0A',
    name: 'Alpha',
    botUser: 'U0ABOT',
    channels: ['C0A1'],
    users: ['U0A1'],
  });
});
afterEach(() => slack.close());

const noToken = () => new WebClient(undefined, { slackApiUrl: slack.url, ...quiet });
const clientFor = (token: string) => new WebClient(token, { slackApiUrl: slack.url, ...quiet });
const creds = { client_id: SLACK_APP.clientId, client_secret: SLACK_APP.clientSecret };
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

describe('oauth.v2.access', () => {
  it('exchanges a code for the install bot token, in the shape Slack answers', async () => {
    const code = slack.authorize({ team: 'T0A', user: 'U0A1', scopes: SCOPES });
    const r = await noToken().oauth.v2.access({ ...creds, code });
    expect(r).toMatchObject({
      ok: true,
      app_id: SLACK_APP.appId,
      token_type: 'bot',
      scope: SCOPES.join(','),
      bot_user_id: 'U0ABOT',
      team: { id: 'T0A', name: 'Alpha' },
      enterprise: null,
      is_enterprise_install: false,
      authed_user: { id: 'U0A1' },
    });
    expect(r.access_token).toMatch(/^xoxb-/);
    expect(r.refresh_token).toBeUndefined();
    // The token is the workspace's: auth.test names its team and bot, and scopes are its own.
    const auth = await clientFor(r.access_token as string).auth.test();
    expect(auth).toMatchObject({ team_id: 'T0A', team: 'Alpha', user_id: 'U0ABOT' });
    expect(auth.response_metadata?.scopes).toEqual(SCOPES);
    // The recording keeps no secret: no client secret, code or token.
    const recorded = JSON.stringify(slack.callsTo('oauth.v2.access'));
    for (const secret of [SLACK_APP.clientSecret, code, r.access_token as string])
      expect(recorded).not.toContain(secret);
  });

  it('takes the client credentials as HTTP Basic too, as Slack does', async () => {
    const code = slack.authorize({ team: 'T0A', user: 'U0A1', scopes: SCOPES });
    const basic = Buffer.from(`${creds.client_id}:${creds.client_secret}`).toString('base64');
    const r = await fetch(`${slack.url}oauth.v2.access`, {
      method: 'POST',
      headers: {
        authorization: `Basic ${basic}`,
        'content-type': 'application/x-www-form-urlencoded',
      },
      body: new URLSearchParams({ code }).toString(),
    }).then((res) => res.json());
    expect(r).toMatchObject({ ok: true, team: { id: 'T0A' } });
  });

  it('refuses a wrong client id or secret, a used code, an old one, another redirect', async () => {
    const exchange = (args: Record<string, string>) => noToken().oauth.v2.access(args as never);
    const code = slack.authorize({
      team: 'T0A',
      user: 'U0A1',
      scopes: SCOPES,
      redirectUri: REDIRECT,
    });
    await expect(exchange({ ...creds, client_id: '9.9', code })).rejects.toMatchObject(
      refusal('invalid_client_id'),
    );
    await expect(exchange({ ...creds, client_secret: 'nope', code })).rejects.toMatchObject(
      refusal('bad_client_secret'),
    );
    await expect(exchange({ ...creds, code, grant_type: 'password' })).rejects.toMatchObject(
      refusal('invalid_grant_type'),
    );
    // The redirect_uri the authorize URL carried must come again, unchanged.
    await expect(exchange({ ...creds, code })).rejects.toMatchObject(refusal('bad_redirect_uri'));
    await expect(
      exchange({ ...creds, code, redirect_uri: 'https://evil.example/cb' }),
    ).rejects.toMatchObject(refusal('bad_redirect_uri'));
    await exchange({ ...creds, code, redirect_uri: REDIRECT });
    await expect(exchange({ ...creds, code, redirect_uri: REDIRECT })).rejects.toMatchObject(
      refusal('invalid_code'),
    );
    await expect(exchange({ ...creds, code: 'made-up' })).rejects.toMatchObject(
      refusal('invalid_code'),
    );
    // A code is good for 10 minutes.
    const late = slack.authorize({ team: 'T0A', user: 'U0A1', scopes: SCOPES });
    slack.advanceClock(10 * 60_000 + 1);
    await expect(exchange({ ...creds, code: late })).rejects.toMatchObject(refusal('invalid_code'));
  });

  it('with token rotation, hands out expiring tokens and rotates the refresh token', async () => {
    slack.configureApp({ tokenRotation: true });
    const code = slack.authorize({ team: 'T0A', user: 'U0A1', scopes: SCOPES });
    const first = await noToken().oauth.v2.access({ ...creds, code });
    expect(first).toMatchObject({ token_type: 'bot', expires_in: 43_200 });
    expect(first.access_token).toMatch(/^xoxe\.xoxb-1-/);
    expect(first.refresh_token).toMatch(/^xoxe-1-/);
    const refresh = (refresh_token: string) =>
      noToken().oauth.v2.access({ ...creds, grant_type: 'refresh_token', refresh_token });
    const second = await refresh(first.refresh_token as string);
    expect(second).toMatchObject({ token_type: 'bot', expires_in: 43_200, team: { id: 'T0A' } });
    expect(second.access_token).not.toBe(first.access_token);
    expect(second.refresh_token).not.toBe(first.refresh_token);
    // The used refresh token is dead; the old access token lives until it expires.
    await expect(refresh(first.refresh_token as string)).rejects.toMatchObject(
      refusal('invalid_refresh_token'),
    );
    await expect(clientFor(first.access_token as string).auth.test()).resolves.toMatchObject({
      team_id: 'T0A',
    });
    slack.advanceClock(43_200_000);
    await expect(clientFor(first.access_token as string).auth.test()).rejects.toMatchObject(
      refusal('token_expired'),
    );
    await expect(clientFor(second.access_token as string).auth.test()).rejects.toMatchObject(
      refusal('token_expired'),
    );
    // Refreshing still works after expiry; Slack keeps two live access tokens per install.
    const third = await refresh(second.refresh_token as string);
    const fourth = await refresh(third.refresh_token as string);
    const fifth = await refresh(fourth.refresh_token as string);
    await expect(clientFor(third.access_token as string).auth.test()).rejects.toMatchObject(
      refusal('invalid_auth'),
    );
    for (const live of [fourth, fifth])
      await expect(clientFor(live.access_token as string).auth.test()).resolves.toBeTruthy();
    // A token a test expires or revokes says so.
    slack.expireToken(fourth.access_token as string);
    await expect(clientFor(fourth.access_token as string).auth.test()).rejects.toMatchObject(
      refusal('token_expired'),
    );
    slack.revokeToken(fifth.access_token as string);
    await expect(
      clientFor(fifth.access_token as string).chat.postMessage({ channel: 'C0A1', text: 'x' }),
    ).rejects.toMatchObject(refusal('invalid_auth'));
  });

  it('installs org-wide in an Enterprise Grid org: no team, the org, is_enterprise_install', async () => {
    const org = { id: 'E0G', name: 'Globex' };
    slack.addWorkspace({
      team: 'T0G1',
      name: 'Globex East',
      enterprise: org,
      botUser: 'U0G1BOT',
      channels: ['C0G1'],
    });
    slack.addWorkspace({
      team: 'T0G2',
      name: 'Globex West',
      enterprise: org,
      botUser: 'U0G2BOT',
      channels: ['C0G2'],
    });
    const code = slack.authorize({
      enterprise: 'E0G',
      orgWide: true,
      user: 'W0ADMIN',
      scopes: SCOPES,
    });
    const r = await noToken().oauth.v2.access({ ...creds, code });
    expect(r).toMatchObject({ team: null, enterprise: org, is_enterprise_install: true });
    const bot = clientFor(r.access_token as string);
    expect(await bot.auth.test()).toMatchObject({
      team_id: 'E0G',
      enterprise_id: 'E0G',
      is_enterprise_install: true,
      user_id: r.bot_user_id,
    });
    // One token for every workspace of the org, and nothing outside it.
    for (const channel of ['C0G1', 'C0G2'])
      await expect(bot.chat.postMessage({ channel, text: 'x' })).resolves.toMatchObject({
        ok: true,
      });
    await expect(bot.chat.postMessage({ channel: 'C0A1', text: 'x' })).rejects.toMatchObject(
      refusal('channel_not_found'),
    );
    // Removed from the org: the org's events, authorized for the org and no workspace.
    const [revoked, uninstalled] = slack.uninstall({ enterprise: 'E0G' });
    expect(uninstalled).toMatchObject({
      team_id: 'E0G',
      enterprise_id: 'E0G',
      event: { type: 'app_uninstalled' },
      authorizations: [{ team_id: null, enterprise_id: 'E0G', is_enterprise_install: true }],
    });
    expect(revoked).toMatchObject({ event: { tokens: { bot: [r.bot_user_id] } } });
    await expect(bot.auth.test()).rejects.toMatchObject(refusal('invalid_auth'));
  });
});

describe("Slack's Allow page (GET /oauth/v2/authorize)", () => {
  const page = (query: Record<string, string>) =>
    fetch(`${slack.authorizeUrl}?${new URLSearchParams(query)}`, { redirect: 'manual' });
  const ask = { client_id: SLACK_APP.clientId, scope: SCOPES.join(','), state: 's1' };

  it('sends the browser back with a code for whoever is signed in, or access_denied', async () => {
    slack.installAs({ team: 'T0A', user: 'U0A1' });
    const ok = new URL((await page(ask)).headers.get('location') ?? '');
    expect(`${ok.origin}${ok.pathname}`).toBe(REDIRECT);
    expect(ok.searchParams.get('state')).toBe('s1');
    const code = ok.searchParams.get('code') ?? '';
    const r = await noToken().oauth.v2.access({ ...creds, code });
    expect(r).toMatchObject({
      team: { id: 'T0A' },
      authed_user: { id: 'U0A1' },
      scope: SCOPES.join(','),
    });
    slack.installAs({ team: 'T0A', user: 'U0A1', deny: true });
    const denied = new URL((await page(ask)).headers.get('location') ?? '');
    expect([denied.searchParams.get('error'), denied.searchParams.get('code')]).toEqual([
      'access_denied',
      null,
    ]);
  });

  it('refuses an unknown app, no scope, and a redirect_uri the app does not list', async () => {
    const refused = async (query: Record<string, string>) => {
      const res = await page(query);
      return [res.status, await res.text()];
    };
    expect(await refused({ ...ask, client_id: '9.9' })).toEqual([400, 'invalid_client_id']);
    expect(await refused({ ...ask, scope: '' })).toEqual([400, 'invalid_scope']);
    expect(await refused({ ...ask, redirect_uri: 'https://evil.example/cb' })).toEqual([
      400,
      'bad_redirect_uri',
    ]);
    expect((await page({ ...ask, redirect_uri: `${REDIRECT}?x=1` })).status).toBe(302);
  });
});

describe("Bolt's own OAuth flow against the fake", () => {
  it('installs through /slack/install, the Allow page and the callback, then refreshes an expired token', async () => {
    slack.configureApp({ tokenRotation: true });
    const port = await freePort();
    const redirect = `http://127.0.0.1:${port}/slack/oauth_redirect`;
    slack.configureApp({ redirectUrls: [redirect] });
    slack.installAs({ team: 'T0A', user: 'U0A1' });
    const store = new MemoryInstallationStore();
    const receiver = new HTTPReceiver({
      signingSecret: 'signing-secret-for-the-test',
      clientId: SLACK_APP.clientId,
      clientSecret: SLACK_APP.clientSecret,
      stateSecret: 'state-secret-for-the-test-0123456789',
      scopes: SCOPES,
      installationStore: store,
      installerOptions: {
        directInstall: true,
        authorizationUrl: slack.authorizeUrl,
        clientOptions: { slackApiUrl: slack.url },
      },
      // The refused state below is logged as an error by Bolt: expected, and not shown.
      logger: silentLogger(),
    });
    await receiver.start(port);
    try {
      // The install path sets the state cookie and sends the browser to Slack's Allow page...
      const install = await fetch(`http://127.0.0.1:${port}/slack/install`, { redirect: 'manual' });
      expect(install.status).toBe(302);
      const cookie = (install.headers.get('set-cookie') ?? '').split(';')[0] ?? '';
      const allow = await fetch(install.headers.get('location') ?? '', { redirect: 'manual' });
      expect(allow.status).toBe(302);
      const back = allow.headers.get('location') ?? '';
      expect(back.startsWith(`${redirect}?`)).toBe(true);
      // ...which sends it back with a code; without the cookie the state is refused.
      const stolen = await fetch(back, { redirect: 'manual' });
      expect(stolen.status).toBe(400);
      expect(slack.callsTo('oauth.v2.access')).toHaveLength(0);
      const done = await fetch(back, { redirect: 'manual', headers: { cookie } });
      expect(done.status).toBe(200);
      const query = { teamId: 'T0A', enterpriseId: undefined, isEnterpriseInstall: false };
      const installed = await store.fetchInstallation(query);
      expect(installed).toMatchObject({
        team: { id: 'T0A', name: 'Alpha' },
        bot: { userId: 'U0ABOT', scopes: SCOPES },
        user: { id: 'U0A1' },
        isEnterpriseInstall: false,
      });
      const first = installed.bot?.token ?? '';
      expect(first).toMatch(/^xoxe\.xoxb-/);
      // 12 hours on (in Bolt's record and at Slack), authorize refreshes before handing it out.
      slack.expireToken(first);
      await store.storeInstallation({ ...installed, bot: { ...installed.bot!, expiresAt: 0 } });
      const auth = await receiver.installer!.authorize(query);
      expect(auth.botToken).toMatch(/^xoxe\.xoxb-/);
      expect(auth.botToken).not.toBe(first);
      await expect(clientFor(auth.botToken!).auth.test()).resolves.toMatchObject({
        team_id: 'T0A',
      });
      await expect(clientFor(first).auth.test()).rejects.toMatchObject(refusal('token_expired'));
    } finally {
      await receiver.stop();
    }
  });
});

describe('the Allow page a person meets in a browser (showAllowPage)', () => {
  const authorize = () =>
    `${slack.authorizeUrl}?client_id=${SLACK_APP.clientId}&scope=chat%3Awrite&state=s1`;
  const hrefOf = (html: string, id: string) => {
    const href = new RegExp(`id="${id}" href="([^"]+)"`).exec(html)?.[1] ?? '';
    return new URL(href.replaceAll('&#38;', '&'), slack.authorizeUrl).toString();
  };

  it('lists the workspaces, switches between them, and Allow sends a code for the one picked', async () => {
    slack.showAllowPage();
    const first = await fetch(authorize());
    const html = await first.text();
    expect(first.headers.get('content-type')).toContain('text/html');
    expect(html).toContain('access the Acme Slack workspace');
    const alpha = await (await fetch(hrefOf(html, 'switch-T0A'))).text();
    expect(alpha).toContain('access the Alpha Slack workspace');
    expect(alpha).toContain('<code>U0A1</code>');
    const allowed = await fetch(hrefOf(alpha, 'allow-T0A'), { redirect: 'manual' });
    expect(allowed.status).toBe(302);
    const back = new URL(allowed.headers.get('location') ?? '');
    expect(`${back.origin}${back.pathname}`).toBe(REDIRECT);
    expect(back.searchParams.get('state')).toBe('s1');
    const r = await noToken().oauth.v2.access({ ...creds, code: back.searchParams.get('code')! });
    expect(r).toMatchObject({ team: { id: 'T0A' }, authed_user: { id: 'U0A1' } });
  });

  it('Cancel sends the browser back with access_denied; off, the page approves at once as before', async () => {
    slack.showAllowPage();
    const html = await (await fetch(authorize())).text();
    const cancel = /class="button cancel" href="([^"]+)"/.exec(html)?.[1] ?? '';
    const denied = await fetch(new URL(cancel.replaceAll('&#38;', '&'), slack.authorizeUrl), {
      redirect: 'manual',
    });
    expect(new URL(denied.headers.get('location') ?? '').searchParams.get('error')).toBe(
      'access_denied',
    );
    slack.showAllowPage(false);
    const direct = await fetch(authorize(), { redirect: 'manual' });
    expect(direct.status).toBe(302);
    expect(new URL(direct.headers.get('location') ?? '').searchParams.get('code')).toBeTruthy();
  });
});
