import { ApiError, BudgetExhausted } from '../api/errors.ts';
import type { Check, SlackAnswer } from './check.ts';
import { type ChannelAnswer, checkDigestChannel } from './digest-channel.ts';
import { checkEmbeddings, type EmbeddingsProbe } from './embeddings.ts';

/**
 * The doctor: checks everything the bot needs from outside (Node, Slack's tokens and scopes,
 * the Mintlify key and project, the database), one line each, with the fix for each failure.
 * Used by `npm run doctor` (scripts/doctor.ts) and `/agent doctor`; it talks to the world only
 * through the ports it is given, and never prints a secret (none reaches it).
 */

export type { Check, SlackAnswer };

export interface DoctorPorts {
  /** `process.version`. */
  nodeVersion: string;
  /** The major version package.json's engines ask for. */
  nodeRequired: number;
  /** auth.test with the bot token, and the scopes Slack says it was granted. */
  authTest(): Promise<
    SlackAnswer<{ user?: string; team?: string; teamId?: string; scopes: string[] | undefined }>
  >;
  /** apps.connections.open with the app token; undefined in HTTP mode (no app token). */
  openConnection: (() => Promise<SlackAnswer<object>>) | undefined;
  /** The bot scopes manifest.yml asks for. */
  manifestScopes(): Promise<string[]>;
  /**
   * One cheap authenticated read of the project (throws the API's typed errors, or a
   * `StaleApiCheck`); resolves with what the check cost, or where its result came from,
   * said on its line.
   */
  checkApi(): Promise<string>;
  /** The project the API check reads; undefined in distributed mode (each workspace has its own). */
  projectId: string | undefined;
  /** Opens (if needed) and pings the database; resolves with what to show. */
  database(): Promise<string>;
  /** The database URL with any password hidden. */
  databaseLabel: string;
  /** conversations.info on DIGEST_CHANNEL; undefined when no digest is set (no check). */
  digestChannel?: (() => Promise<ChannelAnswer>) | undefined;
  /**
   * Distributed mode (OAuth installs): each workspace brings its bot token and docs key, so
   * the environment has none to check. Undefined: one workspace, from the environment.
   */
  distributed?: DistributedMode | undefined;
  /** INSIGHTS_EMBEDDINGS_URL's endpoint; undefined when it is unset (said as off). */
  embeddings?: EmbeddingsProbe | undefined;
}

export interface DistributedMode {
  installPath: string;
  tokenRotation: boolean;
  /** How many workspaces are installed (from the store); unset until installs are stored. */
  installedWorkspaces?: (() => Promise<number>) | undefined;
  /**
   * ENCRYPTION_KEYS against the stored secrets (src/workspaces/key-check.ts): resolves with
   * what to show (key ids and counts), throws the one-line KeyCheckError.
   */
  keyCheck?: (() => Promise<string>) | undefined;
}

/**
 * Which mode the bot runs in, as the line under the doctor's title: `Mode: single workspace
 * (…)` or `Mode: distributed (…)`, with no secret and no id.
 */
export async function describeMode(p: Pick<DoctorPorts, 'distributed'>): Promise<string> {
  const d = p.distributed;
  if (!d) return 'Mode: single workspace (bot token from the environment)';
  const parts = [`OAuth install at ${d.installPath}`];
  if (d.installedWorkspaces) {
    const n = await d.installedWorkspaces().then(
      (count) => `${count} workspace${count === 1 ? '' : 's'} installed`,
      (err: unknown) => `installed workspaces not counted (${reason(err)})`,
    );
    parts.push(n);
  }
  parts.push(`token rotation ${d.tokenRotation ? 'on' : 'off'}`);
  return `Mode: distributed (${parts.join(', ')})`;
}

/**
 * Runs every check, each on its own (one failing never hides the others). In distributed
 * mode the bot token, its scopes and the API key are each workspace's, not the
 * environment's: they are not checked here.
 */
export async function runDoctor(p: DoctorPorts): Promise<Check[]> {
  const node = checkNode(p);
  const database = await guard('Database', () => checkDatabase(p));
  if (p.distributed) {
    const socket = await guard('Slack app token', () => checkSocket(p));
    const keyCheck = p.distributed.keyCheck;
    const keys = keyCheck ? [await checkKeys(keyCheck)] : [];
    return [node, socket, database, ...keys];
  }
  const auth = await p
    .authTest()
    .catch((err: unknown): SlackAnswer<never> => ({ ok: false, error: reason(err) }));
  const token = checkToken(auth);
  const scopes = await guard('Bot scopes', () => checkScopes(p, auth));
  const socket = await guard('Slack app token', () => checkSocket(p));
  const api = await guard('Mintlify API', () => checkApi(p));
  const embeddings = await guard('Embeddings endpoint', () => checkEmbeddings(p.embeddings));
  const digest = p.digestChannel;
  const digestCheck = digest
    ? [await guard('Digest channel', () => checkDigestChannel(digest))]
    : [];
  return [node, token, scopes, socket, api, database, embeddings, ...digestCheck];
}

/** One line per check: `✓ name: detail` or `✗ name: detail. Fix: …`. */
export function formatChecks(checks: Check[]): string[] {
  return checks.map((c) =>
    c.ok
      ? `✓ ${c.name}: ${c.detail}`
      : `✗ ${c.name}: ${c.detail}. Fix: ${c.fix ?? 'see the README'}`,
  );
}

export const allPassed = (checks: Check[]): boolean => checks.every((c) => c.ok);

async function guard(name: string, run: () => Promise<Check>): Promise<Check> {
  try {
    return await run();
  } catch (err) {
    return { name, ok: false, detail: `could not check (${reason(err)})`, fix: 'see the README' };
  }
}

function checkNode(p: DoctorPorts): Check {
  const major = Number(/^v?(\d+)/.exec(p.nodeVersion)?.[1] ?? 0);
  const name = 'Node';
  if (major >= p.nodeRequired)
    return { name, ok: true, detail: `${p.nodeVersion} (needs ${p.nodeRequired} or newer)` };
  return {
    name,
    ok: false,
    detail: `${p.nodeVersion}, but the bot needs Node ${p.nodeRequired} or newer`,
    fix: `install Node ${p.nodeRequired} (e.g. \`nvm install ${p.nodeRequired}\`), then \`npm ci\``,
  };
}

const TOKEN_FIX =
  'copy the Bot User OAuth Token (xoxb-…) from OAuth & Permissions into SLACK_BOT_TOKEN; if the app was uninstalled or the token revoked, reinstall the app to the workspace first';

function checkToken(auth: Awaited<ReturnType<DoctorPorts['authTest']>>): Check {
  const name = 'Slack bot token';
  if (!auth.ok)
    return {
      name,
      ok: false,
      detail: `auth.test answered ${auth.error}`,
      fix: /^(invalid_auth|not_authed|token_revoked|token_expired|account_inactive|not_allowed_token_type)$/.test(
        auth.error,
      )
        ? TOKEN_FIX
        : 'check that SLACK_API_URL points at Slack\u2019s Web API and that this machine can reach it',
    };
  const who = auth.user ? `@${auth.user}` : 'the bot';
  const where = auth.team ? ` in ${auth.team}${auth.teamId ? ` (${auth.teamId})` : ''}` : '';
  return { name, ok: true, detail: `accepted for ${who}${where}` };
}

async function checkScopes(
  p: DoctorPorts,
  auth: Awaited<ReturnType<DoctorPorts['authTest']>>,
): Promise<Check> {
  const name = 'Bot scopes';
  const wanted = await p.manifestScopes();
  if (!auth.ok)
    return {
      name,
      ok: false,
      detail: `not checked: the bot token did not work (manifest.yml asks for ${wanted.join(', ')})`,
      fix: 'fix the bot token first',
    };
  if (!auth.scopes)
    return {
      name,
      ok: false,
      detail: 'Slack did not say which scopes the token has (no x-oauth-scopes header)',
      fix: 'point SLACK_API_URL at Slack\u2019s Web API (a proxy may drop the header)',
    };
  const granted = new Set(auth.scopes);
  const missing = wanted.filter((s) => !granted.has(s));
  if (missing.length === 0)
    return {
      name,
      ok: true,
      detail: `all ${wanted.length} that manifest.yml asks for are granted`,
    };
  return {
    name,
    ok: false,
    detail: `missing ${missing.join(', ')} (manifest.yml asks for ${wanted.length})`,
    fix: 'add them under OAuth & Permissions → Bot Token Scopes (or update the app from manifest.yml), then reinstall the app to the workspace',
  };
}

async function checkSocket(p: DoctorPorts): Promise<Check> {
  const name = 'Slack app token';
  if (!p.openConnection)
    return {
      name,
      ok: true,
      detail:
        'not set: HTTP mode (Slack sends requests to POST /slack/events, signed with SLACK_SIGNING_SECRET)',
    };
  const r = await p
    .openConnection()
    .catch((err: unknown): SlackAnswer<object> => ({ ok: false, error: reason(err) }));
  if (r.ok) return { name, ok: true, detail: 'Socket Mode: Slack opened a connection URL' };
  return {
    name,
    ok: false,
    detail: `Socket Mode: apps.connections.open answered ${r.error}`,
    fix: 'under Basic Information → App-Level Tokens, generate a token with the connections:write scope and set SLACK_APP_TOKEN to it; turn Socket Mode on for the app (or unset SLACK_APP_TOKEN for HTTP mode)',
  };
}

async function checkApi(p: DoctorPorts): Promise<Check> {
  const name = `Mintlify API key and project ${p.projectId}`;
  try {
    return { name, ok: true, detail: `accepted (${await p.checkApi()})` };
  } catch (err) {
    return { name, ok: false, ...apiFailure(err) };
  }
}

/**
 * The API check's result was not asked for now: `original` is a failure from an earlier
 * probe (kept to spare the analytics budget), or undefined when no probe may run yet.
 */
export class StaleApiCheck extends Error {
  /** What the earlier probe failed with; undefined: this project was not probed. */
  readonly original: unknown;
  /** Said with the detail: how old the result is, or why no probe ran. */
  readonly note: string;
  /** When the next probe may run. */
  readonly nextAt: Date;
  constructor(original: unknown, note: string, nextAt: Date) {
    super(note);
    this.name = 'StaleApiCheck';
    this.original = original;
    this.note = note;
    this.nextAt = nextAt;
  }
}

function apiFailure(err: unknown): { detail: string; fix: string } {
  if (err instanceof StaleApiCheck) {
    if (err.original === undefined)
      return {
        detail: `not checked: ${err.note}`,
        fix: `run the doctor again after ${err.nextAt.toISOString().slice(11, 16)} UTC`,
      };
    const earlier = apiFailure(err.original);
    return { detail: `${earlier.detail} (${err.note})`, fix: earlier.fix };
  }
  if (err instanceof BudgetExhausted)
    return {
      detail: `not checked: the analytics budget is spent until ${err.retryAt.toISOString().slice(11, 16)} UTC`,
      fix: 'run the doctor again after that',
    };
  if (!(err instanceof ApiError))
    return { detail: `could not check (${reason(err)})`, fix: 'see the README' };
  switch (err.kind) {
    case 'unauthorized':
      return {
        detail: 'the key was rejected (401)',
        fix: 'set MINTLIFY_API_KEY to an admin key (mint_…) from the dashboard’s API keys page',
      };
    case 'forbidden':
      return {
        detail: 'the key was refused for this project (403)',
        fix: 'use an admin key of the organisation that owns the project, and check the API’s IP allowlist',
      };
    case 'not_found':
      return {
        detail: 'no such project for this key (404)',
        fix: 'copy MINTLIFY_PROJECT_ID from the dashboard’s API keys page',
      };
    default:
      return {
        detail: `${err.message} (${err.kind})`,
        fix: 'check MINTLIFY_API_URL and that this machine can reach it; try again later',
      };
  }
}

async function checkKeys(keyCheck: () => Promise<string>): Promise<Check> {
  const name = 'Encryption keys';
  try {
    return { name, ok: true, detail: await keyCheck() };
  } catch (err) {
    return {
      name,
      ok: false,
      detail: reason(err),
      fix: 'set ENCRYPTION_KEYS to the keys that sealed the stored secrets, the sealing one first (docs/operating.md, Rotating the encryption key); a bot with these keys does not start',
    };
  }
}

async function checkDatabase(p: DoctorPorts): Promise<Check> {
  const name = `Database ${p.databaseLabel}`;
  try {
    return { name, ok: true, detail: await p.database() };
  } catch (err) {
    return {
      name,
      ok: false,
      detail: `could not open or reach it (${reason(err)})`,
      fix: 'check DATABASE_URL (sqlite:PATH with a writable directory, or postgres://… with a reachable server and valid credentials)',
    };
  }
}

function reason(err: unknown): string {
  const text = err instanceof Error ? err.message : String(err);
  return text.split('\n')[0]?.slice(0, 200) ?? 'unknown';
}
