import { z } from 'zod';
import { optionalString } from './rules.ts';

/**
 * The workspace mode, chosen by configuration. With SLACK_CLIENT_ID, SLACK_CLIENT_SECRET and
 * SLACK_STATE_SECRET (all three) the bot is distributed: installed into any number of
 * workspaces with Slack's OAuth flow, each install bringing its own bot token (and its own
 * docs connection). Without them it is today's single workspace: a bot token, an API key
 * and a project from the environment. config.ts builds its schema, its problems and its
 * configuration with the pieces here.
 */

/** The three variables that turn distributed mode on; they go together. */
const OAUTH_VARIABLES = ['SLACK_CLIENT_ID', 'SLACK_CLIENT_SECRET', 'SLACK_STATE_SECRET'] as const;

/** The shortest state secret accepted: it signs the OAuth state Slack hands back. */
const STATE_SECRET_MIN = 32;

/** The distribution variables of config.ts's schema. */
export const DISTRIBUTION_ENV = {
  SLACK_CLIENT_ID: optionalString.pipe(
    z
      .string()
      .regex(/^\d+\.\d+$/, {
        error:
          'must be the app\u2019s Client ID (Basic Information → App Credentials), digits.digits',
      })
      .optional(),
  ),
  SLACK_CLIENT_SECRET: optionalString,
  SLACK_STATE_SECRET: optionalString.pipe(
    z
      .string()
      .min(STATE_SECRET_MIN, {
        error: `must be at least ${STATE_SECRET_MIN} characters (a random string: openssl rand -hex 32)`,
      })
      .optional(),
  ),
  SLACK_TOKEN_ROTATION: optionalString.pipe(
    z
      .enum(['true', 'false'], { error: 'must be true or false' })
      .default('false')
      .transform((v) => v === 'true'),
  ),
};

/** Distributed mode's settings: Bolt's OAuth options (src/slack/oauth.ts). */
export interface Distribution {
  clientId: string;
  clientSecret: string;
  /** Signs the `state` of each install (Bolt's ClearStateStore), checked on the redirect. */
  stateSecret: string;
  /** Where "Add to Slack" starts (GET): Bolt's installPath. */
  installPath: '/slack/install';
  /** Where Slack sends the installer back with a code (GET): the app's Redirect URL. */
  redirectPath: '/slack/oauth_redirect';
  /** Slack issues expiring bot tokens (12 h) with refresh tokens: Bolt refreshes them. */
  tokenRotation: boolean;
}

type DistributionEnv = {
  SLACK_CLIENT_ID?: string | undefined;
  SLACK_CLIENT_SECRET?: string | undefined;
  SLACK_STATE_SECRET?: string | undefined;
  SLACK_TOKEN_ROTATION: boolean;
};

/** Distributed mode's settings from a valid environment; undefined in single-workspace mode. */
export function distributionOf(e: DistributionEnv): Distribution | undefined {
  const { SLACK_CLIENT_ID: clientId, SLACK_CLIENT_SECRET: clientSecret } = e;
  const stateSecret = e.SLACK_STATE_SECRET;
  if (!clientId || !clientSecret || !stateSecret) return undefined;
  return {
    clientId,
    clientSecret,
    stateSecret,
    installPath: '/slack/install',
    redirectPath: '/slack/oauth_redirect',
    tokenRotation: e.SLACK_TOKEN_ROTATION,
  };
}

type RawEnv = Record<string, string | undefined>;
const isSet = (env: RawEnv, name: string): boolean => Boolean(env[name]?.trim());

/** Set by the environment in single-workspace mode, by each install in distributed mode. */
const PER_WORKSPACE: Record<string, string> = {
  SLACK_BOT_TOKEN: 'is required (the xoxb-… bot token)',
  MINTLIFY_API_KEY: 'is required (an admin API key, mint_…)',
  MINTLIFY_PROJECT_ID: 'is required (copy it from the API keys page)',
};

/** Each workspace's own in distributed mode, so refused in the environment: why. */
const WORKSPACE_SETTINGS: Record<string, string> = {
  MINTLIFY_API_KEY: 'each workspace connects its own docs project after installing',
  MINTLIFY_PROJECT_ID: 'each workspace connects its own docs project after installing',
  MINTLIFY_PROJECT_KEYS: 'each workspace connects its own docs project after installing',
  DIGEST_CHANNEL: 'a channel id names a channel of one workspace; each picks its own',
};

/**
 * The rules of the mode the environment chose, one line each, naming variables and never
 * their values. Any of the three OAuth variables means distributed mode was meant: its rules
 * apply (and the single-workspace ones do not), so that the lines say what to change.
 */
export function modeProblems(env: RawEnv): string[] {
  const oauth = OAUTH_VARIABLES.filter((name) => isSet(env, name));
  if (oauth.length === 0) return singleProblems(env);
  const problems: string[] = [];
  const missing = OAUTH_VARIABLES.filter((name) => !isSet(env, name));
  if (missing.length > 0)
    problems.push(
      `SLACK_CLIENT_ID, SLACK_CLIENT_SECRET and SLACK_STATE_SECRET go together (distributed mode, installed with OAuth): ${missing.join(' and ')} ${missing.length === 1 ? 'is' : 'are'} missing; set all three, or none for single-workspace mode`,
    );
  if (isSet(env, 'SLACK_BOT_TOKEN'))
    problems.push(
      'SLACK_BOT_TOKEN cannot be set in distributed mode (SLACK_CLIENT_ID…): each workspace\u2019s bot token comes from its install. Choose one mode: unset SLACK_BOT_TOKEN, or unset SLACK_CLIENT_ID, SLACK_CLIENT_SECRET and SLACK_STATE_SECRET',
    );
  if (isSet(env, 'SLACK_APP_TOKEN'))
    problems.push(
      'SLACK_APP_TOKEN cannot be used in distributed mode: OAuth installs need the HTTP server (/slack/install, /slack/oauth_redirect); unset it and set SLACK_SIGNING_SECRET',
    );
  if (!isSet(env, 'SLACK_SIGNING_SECRET'))
    problems.push(
      'SLACK_SIGNING_SECRET is required in distributed mode (Slack signs its requests to /slack/events and the installs with it)',
    );
  if (!isSet(env, 'ENCRYPTION_KEYS'))
    problems.push(
      'ENCRYPTION_KEYS is required in distributed mode (each workspace\u2019s tokens and docs key are stored encrypted with it); see docs/configuration.md for how to make one',
    );
  for (const [name, why] of Object.entries(WORKSPACE_SETTINGS))
    if (isSet(env, name))
      problems.push(`${name} is not used in distributed mode (${why}): unset it`);
  return problems;
}

/** Today's rules: the bot token, API key and project from the environment; HTTP needs signing. */
function singleProblems(env: RawEnv): string[] {
  const problems = Object.entries(PER_WORKSPACE)
    .filter(([name]) => !isSet(env, name))
    .map(([name, why]) => `${name} ${why}`);
  if (!isSet(env, 'SLACK_APP_TOKEN') && !isSet(env, 'SLACK_SIGNING_SECRET'))
    problems.push(
      'SLACK_SIGNING_SECRET is required in HTTP mode (set SLACK_APP_TOKEN to use Socket Mode instead)',
    );
  if (env.SLACK_TOKEN_ROTATION?.trim() === 'true')
    problems.push(
      'SLACK_TOKEN_ROTATION applies to distributed mode only (a bot token in SLACK_BOT_TOKEN cannot be refreshed): unset it, or set SLACK_CLIENT_ID, SLACK_CLIENT_SECRET and SLACK_STATE_SECRET',
    );
  return problems;
}

/** What single-workspace mode takes from the environment. */
export interface EnvWorkspace {
  botToken: string;
  apiKey: string;
  projectId: string;
}

/**
 * The workspace the environment names (single-workspace mode); undefined in distributed mode,
 * where each install brings its own bot token and each workspace connects its own docs
 * project. Every part of the bot that still serves one workspace only goes through here.
 */
export function envWorkspace(config: {
  distribution: Distribution | undefined;
  slack: { botToken: string | undefined };
  api: { key: string | undefined; projectId: string | undefined };
}): EnvWorkspace | undefined {
  if (config.distribution) return undefined;
  const { botToken } = config.slack;
  const { key: apiKey, projectId } = config.api;
  // A valid configuration has all three in this mode (modeProblems): a bug otherwise.
  if (!botToken || !apiKey || !projectId)
    throw new Error(
      'single-workspace mode needs SLACK_BOT_TOKEN, MINTLIFY_API_KEY and MINTLIFY_PROJECT_ID',
    );
  return { botToken, apiKey, projectId };
}

/**
 * The project of a thread or channel that has none of its own: MINTLIFY_PROJECT_ID in
 * single-workspace mode; '' in distributed mode, where there is no default (each workspace
 * connects its own project, and no request of a workspace that has not reaches the API).
 */
export function defaultProjectOf(config: Parameters<typeof envWorkspace>[0]): string {
  return envWorkspace(config)?.projectId ?? '';
}
