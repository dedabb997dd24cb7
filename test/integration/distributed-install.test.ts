/**
 * Distributed mode, installing: the real bot over HTTP against the fake Slack, on both
 * engines. "Add to Slack" end to end, the callback's refusals, an org-wide install, token
 * rotation, and requests of workspaces that never installed.
 */
import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { readManifestScopes } from '../../src/manifest.ts';
import { SLACK_APP } from '../fakes/slack.ts';
import {
  ALPHA,
  BETA,
  callback,
  closeAfterEach,
  EAST,
  eventFrom,
  GLOBEX,
  homeOpened,
  install,
  startDistributed,
  vaultOf,
  WEST,
} from '../helpers/distributed.ts';
import { STATE_SECRET } from '../helpers/distributed-env.ts';
import type { Harness } from '../helpers/harness.ts';
import { eventually, sleep } from '../helpers/net.ts';
import { postSigned } from '../helpers/slack-requests.ts';
import { engineKinds } from '../helpers/store-engines.ts';

let h: Harness;
closeAfterEach(() => h, 30);

async function start(engine: 'sqlite' | 'postgres', tokenRotation = false): Promise<Harness> {
  const workspaces = [ALPHA, BETA, EAST, WEST];
  h = await startDistributed(engine, { distributed: { tokenRotation }, workspaces });
  return h;
}

/** A JWT as Bolt's ClearStateStore signs its state (HS256), with `now` of our choosing. */
function stateToken(secret: string, now: Date): string {
  const part = (o: object) => Buffer.from(JSON.stringify(o)).toString('base64url');
  const body = `${part({ alg: 'HS256', typ: 'JWT' })}.${part({
    installOptions: { scopes: ['commands'] },
    now: now.toJSON(),
    random: 1,
    iat: Math.floor(now.getTime() / 1000),
  })}`;
  return `${body}.${createHmac('sha256', secret).update(body).digest('base64url')}`;
}

const notInstalledLines = () => h.logLines().filter((l) => l.msg === 'slack.not_installed');

describe.each(engineKinds)('distributed mode: installing (%s)', (engine) => {
  it('installs end to end: /slack/install, the Allow page, the callback with the cookie', async () => {
    await start(engine);
    expect((await fetch(h.url('/healthz'))).status).toBe(200);
    const run = await install(h, { team: ALPHA.team, user: 'U0A1' });
    // The install path goes straight to Slack's authorize page, beside SLACK_API_URL.
    const to = new URL(run.start.headers.get('location') ?? '');
    expect(`${to.origin}${to.pathname}`).toBe(h.slack.authorizeUrl);
    expect(to.searchParams.get('client_id')).toBe(SLACK_APP.clientId);
    expect(to.searchParams.get('scope')?.split(',')).toEqual(await readManifestScopes());
    expect(run.start.headers.get('set-cookie')).toMatch(/^slack-app-oauth-state=.+; .*HttpOnly/);
    expect(run.status).toBe(200);
    expect(run.html).toContain('Docs Agent is installed in <strong>Alpha</strong>');
    expect(run.html).toContain('<strong>Home</strong> tab');
    const stored = await vaultOf(h).listInstallations();
    expect(stored).toMatchObject([
      { teamId: 'T0A', enterpriseId: null, isEnterpriseInstall: false, installerUserId: 'U0A1' },
    ]);
    expect(stored[0]?.botUserId).toBe(ALPHA.botUser);
    // Sealed at rest; opened, the token is the workspace's own.
    const found = await vaultOf(h).findInstallation({ teamId: 'T0A' });
    const token = (found?.body as { bot?: { token: string } } | undefined)?.bot?.token ?? '';
    expect(token).toMatch(/^xoxb-/);
    const row = await h.botStore?.findInstallation({ teamId: 'T0A' });
    expect(row?.sealed).toMatch(/^v1\.k1\./);
    expect(row?.sealed).not.toContain(token);
    const auth = await fetch(`${h.slack.url}auth.test`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}` },
    }).then((r) => r.json());
    expect(auth).toMatchObject({ ok: true, team_id: 'T0A' });
    // No secret on the page or in the log: token, client and state secrets, state, code.
    const code = new URL(run.back).searchParams.get('code') ?? 'no code';
    const state = run.cookie.split('=')[1] ?? 'no state';
    for (const secret of [token, SLACK_APP.clientSecret, STATE_SECRET, state, code]) {
      expect(run.html).not.toContain(secret);
      expect(h.logs).not.toContain(secret);
    }
    expect(h.logLines().find((l) => l.msg === 'install.stored')).toMatchObject({
      teamId: 'T0A',
      reinstalled: false,
    });
  });

  it('refuses a callback without the cookie, with a forged or expired state, or with a code for another redirect, storing nothing', async () => {
    await start(engine);
    const run = await install(h, { team: ALPHA.team, user: 'U0A1' }, { withCookie: false });
    expect([run.status, run.html]).toEqual([400, expect.stringContaining('another browser')]);
    const code = new URL(run.back).searchParams.get('code') ?? '';
    const back = (state: string, c = code) =>
      h.url(`/slack/oauth_redirect?code=${encodeURIComponent(c)}&state=${state}`);
    // A state this app did not sign (cookie and query agreeing), and one past its 10 minutes.
    const forged = stateToken('not-the-state-secret-0123456789abcdef', new Date());
    expect((await callback(h, back(forged), `slack-app-oauth-state=${forged}`)).status).toBe(400);
    const old = stateToken(STATE_SECRET, new Date(Date.now() - 11 * 60_000));
    expect((await callback(h, back(old), `slack-app-oauth-state=${old}`)).status).toBe(400);
    expect(h.slack.callsTo('oauth.v2.access')).toHaveLength(0);
    // A genuine state, but a code Slack issued for another redirect URL: Slack refuses it.
    const elsewhere = h.slack.authorize({
      team: ALPHA.team,
      user: 'U0A1',
      scopes: ['commands'],
      redirectUri: 'https://elsewhere.example/slack/oauth_redirect',
    });
    const fresh = await fetch(h.url('/slack/install'), { redirect: 'manual' });
    const cookie = (fresh.headers.get('set-cookie') ?? '').split(';')[0] ?? '';
    const state = new URL(fresh.headers.get('location') ?? '').searchParams.get('state') ?? '';
    const refused = await callback(h, back(state, elsewhere), cookie);
    expect([refused.status, refused.html]).toEqual([
      502,
      expect.stringContaining('bad_redirect_uri'),
    ]);
    expect(await vaultOf(h).listInstallations()).toEqual([]);
    expect(
      h
        .logLines()
        .filter((l) => l.msg === 'install.failed')
        .map((l) => l.code),
    ).toEqual([
      'slack_oauth_invalid_state',
      'slack_oauth_invalid_state',
      'slack_oauth_invalid_state',
      'slack_webapi_platform_error',
    ]);
  });

  it('installs org-wide: an event from one of the org workspaces is authorized, another workspace is not', async () => {
    await start(engine);
    const run = await install(h, { enterprise: GLOBEX.id, orgWide: true, user: 'W0ADMIN' });
    expect(run.status).toBe(200);
    expect(run.html).toContain('the whole <strong>Globex</strong> organisation');
    expect(await vaultOf(h).listInstallations()).toMatchObject([
      { enterpriseId: GLOBEX.id, teamId: null, isEnterpriseInstall: true },
    ]);
    const from = { team: WEST.team, enterprise: GLOBEX.id, orgWide: true, user: 'W0G2' };
    expect((await eventFrom(h, from, homeOpened('W0G2'))).status).toBe(200);
    const home = await h.slack.waitFor((c) => c.method === 'views.publish');
    expect(home).toMatchObject({ args: { user_id: 'W0G2' }, response: { ok: true } });
    // Beta installed nothing: its (signed) event reaches no listener.
    await eventFrom(h, { team: BETA.team, user: 'U0B1' }, homeOpened('U0B1'));
    await eventually(() => notInstalledLines()[0], 'the refusal');
    expect(notInstalledLines()).toMatchObject([{ teamId: 'T0B' }]);
    expect(h.slack.callsTo('views.publish')).toHaveLength(1);
  });

  it('refreshes an expired rotating token on the next event, and keeps the new tokens sealed', async () => {
    await start(engine, true);
    await install(h, { team: ALPHA.team, user: 'U0A1' });
    const vault = vaultOf(h);
    type Body = { bot: { token: string; refreshToken: string; expiresAt: number } };
    const before = (await vault.findInstallation({ teamId: 'T0A' }))?.body as Body;
    expect(before.bot.token).toMatch(/^xoxe\.xoxb-/);
    // 12 hours on, at Slack and in the bot's record of the token.
    h.slack.expireToken(before.bot.token);
    const ids = { teamId: 'T0A', enterpriseId: null, isEnterpriseInstall: false };
    const expired = { ...before, bot: { ...before.bot, expiresAt: Math.floor(Date.now() / 1000) } };
    await vault.saveInstallation({
      ...ids,
      installerUserId: 'U0A1',
      botUserId: 'U0ABOT',
      body: expired,
    });
    await eventFrom(h, { team: ALPHA.team, user: 'U0A1' }, homeOpened('U0A1'));
    const home = await h.slack.waitFor((c) => c.method === 'views.publish');
    expect(home.response).toMatchObject({ ok: true });
    const after = (await vault.findInstallation({ teamId: 'T0A' }))?.body as Body;
    expect(after.bot.token).toMatch(/^xoxe\.xoxb-/);
    expect(after.bot.token).not.toBe(before.bot.token);
    expect(after.bot.refreshToken).not.toBe(before.bot.refreshToken);
    const row = await h.botStore?.findInstallation({ teamId: 'T0A' });
    for (const secret of [after.bot.token, after.bot.refreshToken]) {
      expect(row?.sealed).not.toContain(secret);
      expect(h.logs).not.toContain(secret);
    }
    // The spent refresh token went to Slack in a request the client logs (debug): scrubbed.
    expect(h.logs).not.toContain(before.bot.refreshToken);
  });

  it('refuses requests of a workspace that never installed: forged signature 401, signed ones reach nothing', async () => {
    await start(engine);
    await install(h, { team: ALPHA.team, user: 'U0A1' });
    const body = JSON.stringify({
      type: 'event_callback',
      team_id: 'T0Z',
      event: homeOpened('U0Z1'),
    });
    const forged = await postSigned(h.eventsUrl, 'not-the-signing-secret', { body });
    expect(forged.status).toBe(401);
    const signed = await eventFrom(h, { team: 'T0Z', user: 'U0Z1' }, homeOpened('U0Z1'));
    expect(signed.status).toBe(200);
    await eventually(() => notInstalledLines()[0], 'the refusal');
    await sleep(200);
    expect(h.slack.callsTo('views.publish')).toHaveLength(0);
    expect(h.api.requests).toHaveLength(0);
    expect(notInstalledLines()).toMatchObject([{ teamId: 'T0Z' }]);
    expect(h.logLines().filter((l) => l.msg === 'slack.unhandled_error')).toEqual([]);
    expect((await fetch(h.url('/healthz'))).status).toBe(200);
  });
});
