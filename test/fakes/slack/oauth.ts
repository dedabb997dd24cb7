/**
 * Slack's OAuth v2 for the app: the "Allow" page (`GET /oauth/v2/authorize`, or the test
 * control `authorize`) hands out one-time codes, and `oauth.v2.access` exchanges a code for
 * the install's bot token, or (token rotation on) a refresh token for a new token pair.
 * Client credentials go as HTTP Basic or as form fields, as Slack accepts both; the errors
 * are Slack's: invalid_client_id, bad_client_secret, invalid_grant_type, invalid_code,
 * bad_redirect_uri, invalid_refresh_token.
 */
import { randomBytes } from 'node:crypto';
import { type Answer, fail, type Json, SLACK_APP, str } from './wire.ts';
import type { AccessToken, Install, Workspace, Workspaces } from './workspaces.ts';

/** How long a code from the Allow page can be exchanged. */
export const CODE_TTL_MS = 10 * 60_000;
/** How long a rotating access token lives (Slack: always 12 hours). */
export const ROTATING_EXPIRES_IN_SEC = 43_200;
/** Slack keeps at most this many live access tokens per install when refreshing. */
const LIVE_TOKEN_LIMIT = 2;

export interface AppConfig {
  appId: string;
  clientId: string;
  clientSecret: string;
  /** The Redirect URLs set under OAuth & Permissions; a redirect_uri must start with one. */
  redirectUrls: string[];
  /** Token rotation turned on: expiring `xoxe.xoxb-` tokens with refresh tokens. */
  tokenRotation: boolean;
}

/** Who clicks Allow, where, for what. */
export interface Approval {
  /** The workspace; for an org-wide install, one of the org's workspaces or `enterprise`. */
  team?: string;
  /** The org, for an org-wide install (`orgWide`). */
  enterprise?: string;
  orgWide?: boolean;
  /** The person installing (`authed_user.id`). */
  user: string;
  scopes: readonly string[];
  /** The redirect_uri the authorize URL carried, if any: the exchange must repeat it. */
  redirectUri?: string;
}

interface Grant {
  install: { workspace?: Workspace; enterprise?: { id: string; name: string }; orgWide: boolean };
  user: string;
  scopes: string[];
  redirectUri: string | undefined;
  issuedAt: number;
  used: boolean;
}

export class OAuth {
  readonly app: AppConfig = { ...SLACK_APP, redirectUrls: [], tokenRotation: false };
  private readonly grants = new Map<string, Grant>();
  private readonly workspaces: Workspaces;

  constructor(workspaces: Workspaces) {
    this.workspaces = workspaces;
  }

  /** What the Allow button does: a one-time code for the app's redirect URL. */
  authorize(a: Approval): string {
    const workspace = a.team ? this.workspaces.workspace(a.team) : undefined;
    const orgId = a.enterprise ?? workspace?.enterprise?.id;
    const enterprise = orgId ? this.workspaces.enterprise(orgId) : undefined;
    if (a.orgWide ? !enterprise : !workspace)
      throw new Error(`authorize: no ${a.orgWide ? 'org' : 'workspace'} ${orgId ?? a.team}`);
    const code = `${Date.now()}.${randomBytes(6).readUIntBE(0, 6)}.${randomBytes(32).toString('hex')}`;
    this.grants.set(code, {
      install: {
        ...(workspace ? { workspace } : {}),
        ...(enterprise ? { enterprise } : {}),
        orgWide: a.orgWide === true,
      },
      user: a.user,
      scopes: [...a.scopes],
      redirectUri: a.redirectUri,
      issuedAt: this.workspaces.now(),
      used: false,
    });
    return code;
  }

  /**
   * `GET /oauth/v2/authorize?client_id&scope&state&redirect_uri[&team]`, as a browser meets it:
   * `approval` (who is signed in and clicks Allow, or denies) sends it back to the redirect
   * URL with `code` and `state` (or `error=access_denied`).
   */
  authorizePage(
    query: URLSearchParams,
    approval: Omit<Approval, 'scopes' | 'redirectUri'> & { deny?: boolean },
  ): Answer {
    const page = (status: number, why: string): Answer => ({ status, body: why });
    if (query.get('client_id') !== this.app.clientId) return page(400, 'invalid_client_id');
    const scopes = (query.get('scope') ?? '').split(',').filter(Boolean);
    if (scopes.length === 0) return page(400, 'invalid_scope');
    const redirectUri = query.get('redirect_uri') ?? undefined;
    const target = redirectUri ?? this.app.redirectUrls[0];
    if (!target || (redirectUri && !this.app.redirectUrls.some((u) => redirectUri.startsWith(u))))
      return page(400, 'bad_redirect_uri');
    const back = new URL(target);
    const state = query.get('state');
    if (state !== null) back.searchParams.set('state', state);
    if (approval.deny) back.searchParams.set('error', 'access_denied');
    else {
      const team = query.get('team') ?? approval.team;
      const code = this.authorize({
        ...approval,
        ...(team ? { team } : {}),
        scopes,
        ...(redirectUri ? { redirectUri } : {}),
      });
      back.searchParams.set('code', code);
    }
    return { status: 302, body: '', headers: { location: back.toString() } };
  }

  /** oauth.v2.access: `basic` is the Authorization header's `Basic …` credentials, if sent. */
  access(a: Json, basic: string | undefined): Json {
    const [basicId, basicSecret] = basic
      ? Buffer.from(basic, 'base64').toString().split(':')
      : [undefined, undefined];
    const clientId = basicId ?? str(a.client_id);
    const clientSecret = basicSecret ?? str(a.client_secret);
    if (clientId !== this.app.clientId) return fail('invalid_client_id');
    if (clientSecret !== this.app.clientSecret) return fail('bad_client_secret');
    const grantType = str(a.grant_type) ?? 'authorization_code';
    if (grantType === 'authorization_code') return this.exchangeCode(a);
    if (grantType === 'refresh_token') return this.refresh(a);
    return fail('invalid_grant_type');
  }

  private exchangeCode(a: Json): Json {
    const code = str(a.code);
    const grant = code ? this.grants.get(code) : undefined;
    if (!grant || grant.used || this.workspaces.now() - grant.issuedAt > CODE_TTL_MS)
      return fail('invalid_code');
    // Slack: the redirect_uri must match the one the authorize URL carried, if it carried one.
    const sent = str(a.redirect_uri);
    const expected = grant.redirectUri ?? this.app.redirectUrls[0];
    if ((grant.redirectUri && sent !== grant.redirectUri) || (sent && sent !== expected))
      return fail('bad_redirect_uri');
    grant.used = true;
    const install = this.workspaces.install({
      ...grant.install,
      scopes: grant.scopes,
      installer: grant.user,
    });
    const rotating = this.app.tokenRotation;
    // Without rotation a re-install keeps the install's bot token; with it, each grant is new.
    const token =
      (!rotating && this.workspaces.live(install).find((t) => t.expiresAt === undefined)) ||
      this.workspaces.issue(install, rotating, ROTATING_EXPIRES_IN_SEC);
    return { ...this.tokenAnswer(install, token), authed_user: { id: grant.user } };
  }

  /** grant_type=refresh_token: a new access token and refresh token; the old refresh token is spent. */
  private refresh(a: Json): Json {
    const value = str(a.refresh_token);
    const install = value ? this.workspaces.spendRefresh(value) : undefined;
    if (!install) return fail('invalid_refresh_token');
    const token = this.workspaces.issue(install, true, ROTATING_EXPIRES_IN_SEC);
    // Slack keeps two live access tokens per install; a third refresh revokes the oldest.
    const live = this.workspaces.live(install);
    for (const old of live.slice(0, Math.max(0, live.length - LIVE_TOKEN_LIMIT)))
      old.revoked = true;
    return this.tokenAnswer(install, token);
  }

  /** oauth.v2.access's answer for one access token of an install. */
  private tokenAnswer(install: Install, token: AccessToken): Json {
    const team = install.workspace
      ? { id: install.workspace.team, name: install.workspace.name }
      : null;
    const rotation =
      token.expiresAt === undefined
        ? {}
        : {
            refresh_token: this.workspaces.issueRefresh(install),
            expires_in: Math.round((token.expiresAt - token.issuedAt) / 1000),
          };
    return {
      ok: true,
      app_id: this.app.appId,
      scope: (install.scopes ?? []).join(','),
      token_type: 'bot',
      access_token: token.value,
      bot_user_id: install.botUser,
      team,
      enterprise: install.enterprise ?? null,
      is_enterprise_install: install.orgWide,
      ...rotation,
    };
  }
}
