/**
 * What Slack checks before a Web API method runs: the token (its kind, revoked, expired),
 * whom it stands for, whether that workspace sees the channel or person named, and the
 * scopes a read needs; and what a recording of an OAuth call may keep (no secret).
 */
import {
  authError,
  type Caller,
  DEFAULT_CALLER,
  fail,
  isBotToken,
  isObj,
  type Json,
  str,
} from './wire.ts';
import type { Workspaces } from './workspaces.ts';

export interface Gate {
  caller: Caller;
  /** The team (or org, for an org-wide install) the token stands for; undefined: none. */
  team: string | undefined;
  /** Slack's refusal, before the method runs; undefined: it runs. */
  refused: Json | undefined;
  /** The scopes to name in `x-oauth-scopes` (a bot token Slack accepted), if known. */
  scopes: string[] | undefined;
}

export interface GateState {
  workspaces: Workspaces;
  /** Tokens revoked by the test (`revokeToken`). */
  revoked: ReadonlySet<string>;
  /** The default workspace's bot token's scopes (`grantScopes`); unset: not said. */
  grantedScopes: string[] | undefined;
  /** The person a trigger id was issued for. */
  triggerUser: (triggerId: string) => string | undefined;
}

/** The checks, in Slack's order: token, then workspace, then scope. */
export function gate(method: string, token: string | undefined, args: Json, s: GateState): Gate {
  const caller = DEFAULT_CALLER;
  const none = { caller, team: undefined, scopes: undefined };
  if (method === 'oauth.v2.access') return { ...none, refused: undefined };
  if (token && s.revoked.has(token)) return { ...none, refused: fail('invalid_auth') };
  const kind = authError(method, token);
  if (kind || !token || !isBotToken(token)) return { ...none, refused: kind };
  const who = s.workspaces.resolve(token);
  if (!who.ok) return { ...none, refused: who.error };
  const scopes = who.install?.scopes ?? s.grantedScopes;
  const refused =
    reachError(method, args, who.caller, s) ??
    (method === 'conversations.info' ? readScopeError(args, scopes) : undefined);
  return { caller: who.caller, team: who.caller.team, refused, scopes };
}

/**
 * Another workspace's channel does not exist for a token (channel_not_found), nor its
 * people (user_not_found; for an ephemeral, user_not_in_channel; a trigger id of theirs is
 * invalid_trigger_id). An org-wide install sees every workspace of its org.
 */
function reachError(method: string, args: Json, caller: Caller, s: GateState): Json | undefined {
  const ws = s.workspaces;
  const channel = str(args.channel) ?? str(args.channel_id);
  if (channel && !ws.reaches(caller, ws.channelOwner(channel))) return fail('channel_not_found');
  const userErrors: Record<string, [string | undefined, string]> = {
    'views.publish': [str(args.user_id), 'user_not_found'],
    'chat.postEphemeral': [str(args.user), 'user_not_in_channel'],
    'views.open': [s.triggerUser(str(args.trigger_id) ?? ''), 'invalid_trigger_id'],
  };
  const [user, error] = userErrors[method] ?? [undefined, ''];
  if (user && !ws.reaches(caller, ws.userOwner(user))) return fail(error);
  return undefined;
}

/**
 * conversations.info needs channels:read (groups:read for a private channel): once the
 * token's scopes are known, a token without it gets missing_scope, as in Slack.
 */
function readScopeError(a: Json, scopes: string[] | undefined): Json | undefined {
  const needed = str(a.channel)?.startsWith('G') ? 'groups:read' : 'channels:read';
  if (!scopes || scopes.includes(needed)) return undefined;
  return { ...fail('missing_scope'), needed, provided: scopes.join(',') };
}

/** An OAuth call as it may be recorded: no client secret, code or token in args or answer. */
export function scrubOAuth(args: Json, response: unknown): { args: Json; response: unknown } {
  const { client_secret: _s, code: _c, refresh_token: _r, ...kept } = args;
  if (!isObj(response)) return { args: kept, response };
  const hidden = Object.fromEntries(
    ['access_token', 'refresh_token']
      .filter((k) => response[k] !== undefined)
      .map((k) => [k, '[redacted]']),
  );
  return { args: kept, response: { ...response, ...hidden } };
}
