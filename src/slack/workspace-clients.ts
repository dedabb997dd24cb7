import type { AuthorizeResult } from '@slack/bolt';
import { WebClient, type WebClientOptions } from '@slack/web-api';
import { ChatError, NOT_INSTALLED } from '../chat-errors.ts';
import type { Logger } from '../log.ts';
import type { SettledWork, WorkspaceRef } from '../store/types.ts';
import { NotInstalled } from './installation-store.ts';

/**
 * Distributed mode's Web API clients for the work no incoming request carries (the notifier,
 * the App Home, the reports): one WebClient per workspace, holding its install's bot token.
 * The token comes from Bolt's installer (`authorize`: the installation store, which refreshes
 * a rotating token about to expire and saves the new one) and is kept a short while: at most
 * `ttlMs`, and never past the moment the installer would refresh it, so a refreshed token
 * replaces the pooled client at the next look. A client whose token Slack refuses is dropped
 * at once. Lookups of one workspace run one at a time (a single-use refresh token is spent
 * once). No token is ever logged.
 *
 * A client bound to its token, rather than one shared client given a `token` on each call:
 * every call site (chat.ts, home.ts, the posters, history.ts) takes a WebClient and calls it
 * as it is, and a call made with a pooled client cannot go out with another workspace's
 * token, or with none because one site forgot to pass it. Bolt pools its listeners' clients
 * the same way.
 */

/** Where the WebClient for a workspace comes from, for what no request carries. */
export interface ClientSource {
  clientFor(ws: WorkspaceRef): Promise<WebClient>;
  /** Slack refused the token `client` holds (expired, revoked): it is not handed out again. */
  refused?(ws: WorkspaceRef, client: WebClient): void;
}

/** One WebClient for every workspace: single-workspace mode's, and the benchmarks'. */
export function oneClient(client: WebClient): ClientSource {
  return { clientFor: async () => client };
}

/** Slack's answers that mean the token itself is done for (the pooled client is dropped). */
export const TOKEN_REFUSALS: ReadonlySet<string> = new Set([
  'token_expired',
  'invalid_auth',
  'token_revoked',
  'account_inactive',
  'not_authed',
]);

/** Bolt's installer's authorize, as asked for a workspace outside any request. */
export type InstallAuthorize = (source: {
  teamId: string;
  enterpriseId: string | undefined;
  isEnterpriseInstall: false;
}) => Promise<AuthorizeResult>;

export interface WorkspaceClients extends Required<ClientSource> {
  /** The install's bot user in the workspace (`botUserId` of the authorize result). */
  botUserFor(ws: WorkspaceRef): Promise<string | undefined>;
}

export interface WorkspaceClientsDeps {
  authorize: InstallAuthorize;
  clientOptions: WebClientOptions;
  log: Logger;
  /**
   * The workspace has no installation any more: settles its pending Slack work (the
   * store's settleWorkspaceWork). Once per discovery, however many calls found it out.
   */
  gone?: ((teamId: string) => Promise<SettledWork>) | undefined;
  now?: () => number;
  /** How long a token is used without asking the installer again. */
  ttlMs?: number;
}

const TTL_MS = 60_000;
/** Bolt's installer refreshes a rotating token this long before it expires. */
const REFRESH_WINDOW_MS = 2 * 3_600_000;
/** Workspaces whose client is kept; the least recently used goes first. */
const MAX_POOLED = 10_000;

interface Pooled {
  client: WebClient;
  token: string;
  botUserId: string | undefined;
  freshUntil: number;
}

export function createWorkspaceClients(deps: WorkspaceClientsDeps): WorkspaceClients {
  const log = deps.log.child({ component: 'slack-clients' });
  const now = deps.now ?? Date.now;
  const ttlMs = deps.ttlMs ?? TTL_MS;
  const pool = new Map<string, Pooled>();
  const asking = new Map<string, Promise<Pooled>>();
  const keyOf = (ws: WorkspaceRef) => `${ws.enterpriseId ?? ''}:${ws.teamId}`;

  function pooled(ws: WorkspaceRef): Promise<Pooled> {
    const key = keyOf(ws);
    const had = pool.get(key);
    if (had && had.freshUntil > now()) {
      pool.delete(key); // most recently used last
      pool.set(key, had);
      return Promise.resolve(had);
    }
    let pending = asking.get(key);
    if (!pending) {
      pending = ask(ws, had).finally(() => asking.delete(key));
      asking.set(key, pending);
    }
    return pending;
  }

  async function ask(ws: WorkspaceRef, had: Pooled | undefined): Promise<Pooled> {
    const key = keyOf(ws);
    const ids = { teamId: ws.teamId, enterpriseId: ws.enterpriseId ?? null };
    let auth: AuthorizeResult;
    try {
      const enterpriseId = ws.enterpriseId || undefined;
      auth = await deps.authorize({ teamId: ws.teamId, enterpriseId, isEnterpriseInstall: false });
    } catch (err) {
      pool.delete(key);
      if (!isNotInstalled(err)) {
        log.warn({ ...ids, err: causeOf(err) }, 'slack.client_authorize_failed');
        throw new ChatError('authorize_failed', { retryable: true });
      }
      // Settled first: a caller that sees NOT_INSTALLED has nothing left to record.
      const settled = await settle(ws).then(
        () => true,
        () => false,
      );
      throw new ChatError(NOT_INSTALLED, { retryable: !settled });
    }
    const token = auth.botToken;
    if (!token) {
      pool.delete(key);
      log.warn(ids, 'slack.client_no_bot_token');
      throw new ChatError('no_bot_token', { retryable: false });
    }
    const client =
      had?.token === token
        ? had.client
        : new WebClient(token, { ...deps.clientOptions, teamId: ws.teamId });
    const expiresAt = typeof auth.botTokenExpiresAt === 'number' ? auth.botTokenExpiresAt : null;
    const entry: Pooled = {
      client,
      token,
      botUserId: auth.botUserId,
      freshUntil: Math.min(
        now() + ttlMs,
        expiresAt === null ? Number.POSITIVE_INFINITY : expiresAt * 1000 - REFRESH_WINDOW_MS,
      ),
    };
    pool.delete(key);
    pool.set(key, entry);
    if (pool.size > MAX_POOLED) pool.delete(pool.keys().next().value ?? '');
    if (had && had.token !== token) log.debug(ids, 'slack.client_token_replaced');
    return entry;
  }

  /**
   * The workspace's pending work settled, in one line for it. Lookups of it at once share
   * one (`asking`); a later one finds nothing left to settle, and says so only at debug.
   */
  async function settle(ws: WorkspaceRef): Promise<void> {
    const ids = { teamId: ws.teamId, enterpriseId: ws.enterpriseId ?? null };
    try {
      if (!deps.gone) throw new Error('nothing settles the work of a workspace with no install');
      const settled = await deps.gone(ws.teamId);
      const line = { ...ids, reason: NOT_INSTALLED, ...settled };
      if (settled.announcements + settled.roots > 0) log.warn(line, 'slack.workspace_work_dropped');
      else log.debug(line, 'slack.workspace_not_installed');
    } catch (err) {
      log.warn({ ...ids, err }, 'slack.workspace_work_unsettled');
      throw err;
    }
  }

  return {
    clientFor: async (ws) => (await pooled(ws)).client,
    botUserFor: async (ws) => (await pooled(ws)).botUserId,
    refused(ws, client) {
      const key = keyOf(ws);
      if (pool.get(key)?.client === client) pool.delete(key);
    },
  };
}

/** Bolt's installer wraps what the installation store threw (`original`). */
function causeOf(err: unknown): unknown {
  return (err as { original?: unknown } | undefined)?.original ?? err;
}

function isNotInstalled(err: unknown): boolean {
  return causeOf(err) instanceof NotInstalled || err instanceof NotInstalled;
}
