/**
 * Events API envelopes as Slack POSTs them to an app (`event_callback`), for a workspace or
 * an org-wide install, and the two lifecycle events Slack sends when an install ends:
 * `app_uninstalled` and `tokens_revoked` (in no guaranteed order). Bolt answers both
 * without authorizing them (there is no token left to fetch).
 */
import { randomBytes } from 'node:crypto';
import { SLACK_IDS } from './wire.ts';

const nowSec = (): number => Math.floor(Date.now() / 1000);

export interface EnvelopeOpts {
  event_id?: string;
  event_time?: number;
  /** The workspace; for an org-wide install's own events, the org's id. */
  team_id?: string;
  /** The Enterprise Grid org, when the workspace is in one. */
  enterprise_id?: string;
  /** The event is for an org-wide install (authorizations[0].is_enterprise_install). */
  is_enterprise_install?: boolean;
  /** The install's bot user (authorizations[0].user_id); the default workspace's by default. */
  bot_user?: string;
}

/** Wrap an inner event in the Events API `event_callback` envelope. */
export function eventCallback(
  event: Record<string, unknown>,
  opts: EnvelopeOpts = {},
): Record<string, unknown> {
  const team_id = opts.team_id ?? SLACK_IDS.team;
  const enterprise_id = opts.enterprise_id ?? null;
  const orgWide = opts.is_enterprise_install === true;
  return {
    token: 'legacy-verification-token',
    team_id,
    ...(enterprise_id ? { enterprise_id } : {}),
    context_team_id: orgWide ? null : team_id,
    context_enterprise_id: enterprise_id,
    api_app_id: SLACK_IDS.appId,
    event,
    type: 'event_callback',
    event_id: opts.event_id ?? `Ev${randomBytes(5).toString('hex').toUpperCase()}`,
    event_time: opts.event_time ?? nowSec(),
    authorizations: [
      {
        enterprise_id,
        // An org-wide install is authorized for the org, not for one workspace.
        team_id: orgWide ? null : team_id,
        user_id: opts.bot_user ?? SLACK_IDS.botUser,
        is_bot: true,
        is_enterprise_install: orgWide,
      },
    ],
    is_ext_shared_channel: false,
    event_context: `4-${randomBytes(12).toString('base64url')}`,
  };
}

/** Where an install lived: a workspace (in an org or not), or an org for an org-wide install. */
export interface InstallPlace {
  team_id: string;
  enterprise_id?: string;
  is_enterprise_install?: boolean;
  bot_user?: string;
}

/** `app_uninstalled`: the app was removed from the workspace (or the org); its tokens are dead. */
export function appUninstalledEvent(
  where: InstallPlace,
  opts: Omit<EnvelopeOpts, keyof InstallPlace> = {},
): Record<string, unknown> {
  return eventCallback({ type: 'app_uninstalled' }, { ...opts, ...where });
}

/**
 * `tokens_revoked`: tokens of the install were revoked. Slack names the users whose tokens
 * they were (`bot`: the bot user; `oauth`: people's user tokens), never the tokens.
 */
export function tokensRevokedEvent(
  where: InstallPlace,
  tokens: { bot?: string[]; oauth?: string[] },
  opts: Omit<EnvelopeOpts, keyof InstallPlace> = {},
): Record<string, unknown> {
  return eventCallback({ type: 'tokens_revoked', tokens }, { ...opts, ...where });
}
