/**
 * The workspaces the fake Slack knows, the installs of the app in them (one per workspace, or
 * one per Enterprise Grid org for an org-wide install) and the tokens each install holds.
 * Every Web API call's token resolves here to who is calling; a channel or a person belongs
 * to one workspace, and another workspace's token does not see it (`channel_not_found`), as
 * in Slack. The default workspace (SLACK_IDS) owns every channel and person no added
 * workspace lists, and takes any bot token the fake did not issue, as the fake always has.
 */
import { randomBytes } from 'node:crypto';
import { type Caller, DEFAULT_CALLER, fail, type Json, SLACK_IDS } from './wire.ts';

export interface WorkspaceSpec {
  /** The team id, `T…`. */
  team: string;
  name: string;
  /** `<domain>.slack.com`; the name in lower case by default. */
  domain?: string;
  /** The Enterprise Grid org the workspace belongs to, if any. */
  enterprise?: { id: string; name: string };
  /** The app's bot user in this workspace (`U…`) and its bot id (`B…`, derived by default). */
  botUser: string;
  botId?: string;
  channels?: readonly string[];
  users?: readonly string[];
}

export interface Workspace {
  team: string;
  name: string;
  domain: string;
  enterprise: { id: string; name: string } | undefined;
  botUser: string;
  botId: string;
  channels: readonly string[];
  users: readonly string[];
}

export interface AccessToken {
  value: string;
  install: Install;
  issuedAt: number;
  /** Rotating tokens only: when Slack stops taking it (`token_expired`). */
  expiresAt: number | undefined;
  revoked: boolean;
}

/** The app installed in one workspace, or org-wide in an Enterprise Grid org. */
export interface Install {
  /** The workspace's team id, or the org's id for an org-wide install. */
  key: string;
  workspace: Workspace | undefined;
  enterprise: { id: string; name: string } | undefined;
  orgWide: boolean;
  botUser: string;
  botId: string;
  scopes: string[] | undefined;
  installer: string | undefined;
  tokens: AccessToken[];
  /** Refresh tokens not used yet (rotating installs). */
  refreshTokens: Set<string>;
}

export type Resolved =
  | { ok: true; caller: Caller; install: Install | undefined }
  | { ok: false; error: Json };

const DEFAULT_WORKSPACE: Workspace = {
  team: SLACK_IDS.team,
  name: SLACK_IDS.teamName,
  domain: 'acme',
  enterprise: undefined,
  botUser: SLACK_IDS.botUser,
  botId: SLACK_IDS.botId,
  channels: [],
  users: [],
};

const secret = (n: number) => randomBytes(n).toString('base64url').replace(/[-_]/g, 'x');

export class Workspaces {
  private readonly added = new Map<string, Workspace>();
  private readonly installs = new Map<string, Install>();
  private readonly tokens = new Map<string, AccessToken>();
  private seq = 0;
  /** The fake's clock (token and code expiry); tests move it with `advance`. */
  private offsetMs = 0;

  now(): number {
    return Date.now() + this.offsetMs;
  }

  advance(ms: number): void {
    this.offsetMs += ms;
  }

  /** A workspace with its channels and people, the app installed in it: its bot token. */
  add(spec: WorkspaceSpec): Workspace & { botToken: string } {
    if (spec.team === DEFAULT_WORKSPACE.team || this.added.has(spec.team))
      throw new Error(`addWorkspace: ${spec.team} exists already`);
    for (const channel of spec.channels ?? []) {
      const owner = this.channelOwner(channel);
      if (owner !== DEFAULT_WORKSPACE)
        throw new Error(`addWorkspace: ${channel} belongs to ${owner.team} already`);
    }
    const workspace: Workspace = {
      team: spec.team,
      name: spec.name,
      domain: spec.domain ?? spec.name.toLowerCase().replace(/[^a-z0-9-]/g, ''),
      enterprise: spec.enterprise,
      botUser: spec.botUser,
      botId: spec.botId ?? `B${spec.botUser.slice(1)}`,
      channels: [...(spec.channels ?? [])],
      users: [...(spec.users ?? [])],
    };
    this.added.set(workspace.team, workspace);
    const install = this.install({ workspace, orgWide: false, scopes: undefined });
    return { ...workspace, botToken: this.issue(install, false).value };
  }

  /** Every workspace, the default one first. */
  list(): Workspace[] {
    return [DEFAULT_WORKSPACE, ...this.added.values()];
  }

  workspace(team: string): Workspace | undefined {
    return team === DEFAULT_WORKSPACE.team ? DEFAULT_WORKSPACE : this.added.get(team);
  }

  /** An org's id and name, from the workspaces that belong to it. */
  enterprise(id: string): { id: string; name: string } | undefined {
    return [...this.added.values()].find((w) => w.enterprise?.id === id)?.enterprise;
  }

  installOf(key: string): Install | undefined {
    return this.installs.get(key);
  }

  /** The install for a workspace (or org-wide for an org), created if there is none. */
  install(o: {
    workspace?: Workspace;
    enterprise?: { id: string; name: string };
    orgWide: boolean;
    scopes: string[] | undefined;
    installer?: string;
  }): Install {
    const key = o.orgWide ? (o.enterprise?.id ?? '') : (o.workspace?.team ?? '');
    const existing = this.installs.get(key);
    const install: Install = existing ?? {
      key,
      workspace: o.orgWide ? undefined : o.workspace,
      enterprise: o.orgWide ? o.enterprise : o.workspace?.enterprise,
      orgWide: o.orgWide,
      // An org-wide install has one bot user for the whole org.
      botUser: o.workspace?.botUser ?? `W${key.slice(1)}BOT`,
      botId: o.workspace?.botId ?? `B${key.slice(1)}BOT`,
      scopes: undefined,
      installer: undefined,
      tokens: [],
      refreshTokens: new Set(),
    };
    install.scopes = o.scopes ?? install.scopes;
    install.installer = o.installer ?? install.installer;
    this.installs.set(key, install);
    return install;
  }

  /** A new access token for `install`: rotating ones expire in `expiresInSec`. */
  issue(install: Install, rotating: boolean, expiresInSec = 43_200): AccessToken {
    const issuedAt = this.now();
    const value = rotating
      ? `xoxe.xoxb-1-${secret(48)}`
      : `xoxb-${install.key.slice(1)}-${++this.seq}-${secret(18)}`;
    const token: AccessToken = {
      value,
      install,
      issuedAt,
      expiresAt: rotating ? issuedAt + expiresInSec * 1000 : undefined,
      revoked: false,
    };
    install.tokens.push(token);
    this.tokens.set(value, token);
    return token;
  }

  /** A new refresh token (`xoxe-1-…`) for a rotating install. */
  issueRefresh(install: Install): string {
    const value = `xoxe-1-${secret(48)}`;
    install.refreshTokens.add(value);
    return value;
  }

  /** The install a refresh token belongs to, spending it (each works once); undefined if none. */
  spendRefresh(value: string): Install | undefined {
    const install = [...this.installs.values()].find((i) => i.refreshTokens.has(value));
    install?.refreshTokens.delete(value);
    return install;
  }

  /** The install's tokens Slack still takes, oldest first. */
  live(install: Install): AccessToken[] {
    const now = this.now();
    return install.tokens.filter(
      (t) => !t.revoked && (t.expiresAt === undefined || t.expiresAt > now),
    );
  }

  /** From now on the token answers `token_expired` (as if its 12 hours were up). */
  expire(value: string): void {
    const t = this.tokens.get(value);
    if (!t) throw new Error('expireToken: the fake did not issue that token');
    t.expiresAt = this.now();
  }

  /** Revokes every token of the install and forgets it: a re-install starts anew. */
  uninstall(key: string): Install | undefined {
    const install = this.installs.get(key);
    if (!install) return undefined;
    for (const t of install.tokens) t.revoked = true;
    install.refreshTokens.clear();
    this.installs.delete(key);
    return install;
  }

  /** Whom a token stands for, or Slack's refusal (`invalid_auth`, `token_expired`). */
  resolve(token: string): Resolved {
    const t = this.tokens.get(token);
    if (!t) {
      // Tests bring their own xoxb- tokens for the default workspace; a rotating one must be issued.
      if (token.startsWith('xoxb-'))
        return { ok: true, caller: DEFAULT_CALLER, install: undefined };
      return { ok: false, error: fail('invalid_auth') };
    }
    if (t.revoked) return { ok: false, error: fail('invalid_auth') };
    if (t.expiresAt !== undefined && t.expiresAt <= this.now())
      return { ok: false, error: fail('token_expired') };
    const i = t.install;
    const caller: Caller = {
      team: i.key,
      enterprise: i.enterprise?.id,
      orgWide: i.orgWide,
      botUser: i.botUser,
      botId: i.botId,
    };
    return { ok: true, caller, install: i };
  }

  /** auth.test's answer for the caller's token: its own team (or org) and bot user. */
  authTest(caller: Caller): Json {
    const user = SLACK_IDS.botUserName;
    const { user_id, bot_id } = { user_id: caller.botUser, bot_id: caller.botId };
    if (caller === DEFAULT_CALLER) {
      const { teamName: team } = SLACK_IDS;
      return {
        ok: true,
        url: 'https://acme.slack.com/',
        team,
        user,
        team_id: caller.team,
        user_id,
        bot_id,
      };
    }
    if (caller.orgWide) {
      const org = this.enterprise(caller.team);
      const url = `https://${(org?.name ?? 'org').toLowerCase().replace(/[^a-z0-9-]/g, '')}.enterprise.slack.com/`;
      const ids = { team_id: caller.team, enterprise_id: caller.team };
      return {
        ok: true,
        url,
        team: org?.name,
        user,
        ...ids,
        user_id,
        bot_id,
        is_enterprise_install: true,
      };
    }
    const w = this.workspace(caller.team) ?? DEFAULT_WORKSPACE;
    const url = `https://${w.domain}.slack.com/`;
    const org = w.enterprise ? { enterprise_id: w.enterprise.id } : {};
    const who = { team: w.name, user, team_id: w.team, user_id, bot_id };
    return { ok: true, url, ...who, ...org, is_enterprise_install: false };
  }

  /** The workspace a channel belongs to: the one listing it, or the default workspace. */
  channelOwner(channel: string): Workspace {
    for (const w of this.added.values()) if (w.channels.includes(channel)) return w;
    return DEFAULT_WORKSPACE;
  }

  userOwner(user: string): Workspace {
    for (const w of this.added.values()) if (w.users.includes(user)) return w;
    return DEFAULT_WORKSPACE;
  }

  /** Whether the caller's token sees what belongs to `owner`: its workspace, or its whole org. */
  reaches(caller: Caller, owner: Workspace): boolean {
    if (caller.orgWide) return owner.enterprise?.id === caller.enterprise;
    return owner.team === caller.team;
  }
}
