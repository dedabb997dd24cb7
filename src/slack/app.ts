import type { ServerResponse } from 'node:http';
import {
  App,
  type Authorize,
  type Logger as BoltLogger,
  type CustomRoute,
  type Receiver,
  type ReceiverEvent,
} from '@slack/bolt';
import type { WebClient, WebClientOptions } from '@slack/web-api';
import { ChatError, NOT_INSTALLED } from '../chat-errors.ts';
import type { Config } from '../config/config.ts';
import type { BotRef } from '../invite-hint.ts';
import { boltLogger, type Logger } from '../log.ts';
import type { SettledWork, WorkspaceRef } from '../store/types.ts';
import { toChatError } from './chat.ts';
import { NotInstalled } from './installation-store.ts';
import {
  closeServer,
  httpIntake,
  type InstallProvider,
  type Intake,
  socketIntake,
} from './intake.ts';
import { type OAuthSetup, oauthReceiverOptions } from './oauth.ts';
import { type ClientSource, createWorkspaceClients } from './workspace-clients.ts';

/** What a GET on one of the bot's own HTTP endpoints answers, whichever server serves it. */
export interface Answer {
  status: number;
  contentType: string;
  body: string;
}

export interface Endpoint {
  path: string;
  answer: () => Promise<Answer>;
}

/**
 * How long a connection still in the middle of a request may take to finish once the HTTP
 * server closes; idle keep-alive connections are closed at once.
 */
export const KEEP_ALIVE_GRACE_MS = 1_000;

/** Who the bot is in this workspace, as auth.test answered at start-up. */
export interface BotIdentity {
  /** The bot user's id (`user_id`): mentions of the bot read `<@userId>`. */
  userId: string;
  /** The bot user's name (`user`): what `/invite @name` takes. */
  name: string;
}

export interface SlackApp extends Required<ClientSource> {
  app: App;
  /**
   * Known once `start()` has verified the token; undefined before, and always in
   * distributed mode, where the bot user is each install's (`context.botUserId`, `botFor`).
   */
  identity(): BotIdentity | undefined;
  /**
   * The WebClient to talk to a workspace with when no request carries one (the notifier,
   * the App Home, reports): the app's own in single-workspace mode; in distributed mode one
   * holding the workspace's install's bot token (./workspace-clients.ts). Rejects with a
   * ChatError: NOT_INSTALLED for a workspace with no install (its pending work settled).
   */
  clientFor(ws: WorkspaceRef): Promise<WebClient>;
  /** Slack refused the token `client` holds: distributed mode asks the installer again. */
  refused(ws: WorkspaceRef, client: WebClient): void;
  /**
   * Who the bot is in a workspace: the verified identity in single-workspace mode; the
   * install's bot user (its id, not its name) in distributed mode.
   */
  botFor(ws: WorkspaceRef): Promise<BotRef | undefined>;
  /**
   * Runs `hook` on every incoming request body before Bolt handles it, and so before Slack
   * is acknowledged (events are acked as soon as Bolt sees them): what it records survives a
   * crash right after the ack. If it throws, the request is not acked and Slack retries.
   */
  beforeAck(hook: (body: unknown) => Promise<void>): void;
  start(): Promise<void>;
  /** Whether Slack can reach us: the socket is connected, or the HTTP server is listening. */
  connected(): boolean;
  /**
   * Stops taking commands and events: Socket Mode disconnects, HTTP answers
   * `/slack/events` with 503 (Slack retries events elsewhere or later). The server stays
   * up for the probes and metrics until `stop()`, and every answer from now on carries
   * `Connection: close`, so that keep-alive clients (probes, scrapers) let go.
   */
  stopIntake(): Promise<void>;
  /**
   * Closes the HTTP server: idle connections at once, one still in a request after
   * `graceMs` (KEEP_ALIVE_GRACE_MS by default), so no client can hold the stop open.
   */
  stop(graceMs?: number): Promise<void>;
}

/** How the bot's WebClient talks to Slack (the benchmarks build theirs the same way). */
export function webClientOptions(apiUrl: string, timeoutMs = 15_000): WebClientOptions {
  return {
    slackApiUrl: apiUrl,
    // The notifier's outbox owns retries (checking the thread before posting again); a
    // client-side resend of chat.postMessage after a 5xx could post twice. Rate-limited
    // calls are rejected, not queued, so the caller decides when to ask again.
    rejectRateLimitedCalls: true,
    retryConfig: { retries: 0 },
    // No call may hold a notifier slot (and its channel's queue) for long, nor outlast the
    // lease of the post it makes (LEASE_MS is at least twice this: src/config/config.ts).
    timeout: timeoutMs,
  };
}

/**
 * The Bolt app: Socket Mode when an app token is configured, otherwise HTTP with
 * `POST /slack/events`. Both serve the given endpoints (GET) on PORT. With `oauth`
 * (distributed mode) it is installed with OAuth (./oauth.ts) and each request is authorized
 * with its workspace's installation; otherwise the bot token authorizes everything.
 */
export function createSlackApp(opts: {
  config: Pick<Config, 'slack' | 'port'>;
  log: Logger;
  endpoints: Endpoint[];
  oauth?: OAuthSetup | undefined;
  /** Distributed mode: settles the pending work of a team found to have no install. */
  workspaceGone?: ((teamId: string) => Promise<SettledWork>) | undefined;
}): SlackApp {
  const { slack, port } = opts.config;
  const logger = boltLogger(opts.log.child({ component: 'bolt' }));
  const clientOptions = webClientOptions(slack.apiUrl, slack.timeoutMs);
  const customRoutes = opts.endpoints.map(
    (e): CustomRoute => ({
      path: e.path,
      method: ['GET'],
      handler: (_req: unknown, res: ServerResponse) => serve(e, res, opts.log),
    }),
  );
  const intake = intakeFor(opts, customRoutes, logger);
  const installer = intake.installer;
  if (opts.oauth && !installer) throw new Error('distributed mode needs the HTTP receiver');
  const hooks: ((body: unknown) => Promise<void>)[] = [];
  // Deferred so that a bad token or an unreachable Slack is a readable start-up error
  // rather than an unhandled rejection from inside the constructor.
  const app = new App({
    receiver: runningFirst(intake.receiver, async (body) => {
      for (const hook of hooks) await hook(body);
    }),
    // Our receiver stand-in hides Bolt's installer: its authorize is passed on explicitly.
    ...(installer
      ? { authorize: installedOnly(installer, opts.log, opts.oauth?.authorizing) }
      : { token: slack.botToken }),
    logger,
    clientOptions,
    ignoreSelf: true,
    deferInitialization: true,
  });
  let started = false;
  let stopping = false;
  let identity: BotIdentity | undefined;
  const workspaces = workspaceAccess(app, () => identity, {
    installer,
    clientOptions: { ...clientOptions, logger },
    log: opts.log,
    gone: opts.workspaceGone,
  });
  return {
    app,
    identity: () => identity,
    ...workspaces,
    beforeAck: (hook) => {
      hooks.push(hook);
    },
    async start() {
      // Distributed mode has no token of its own to check: each install's is checked when
      // it is made (Bolt's auth.test after the code exchange).
      if (installer) await app.init();
      else identity = await verifyToken(app, slack.apiUrl);
      intake.started(await app.start(port));
      intake.server()?.prependListener('request', (_req, res: ServerResponse) => {
        if (stopping) res.setHeader('connection', 'close');
      });
      started = true;
    },
    connected: () => intake.connected(),
    stopIntake: () => {
      stopping = true;
      return intake.stop();
    },
    async stop(graceMs = KEEP_ALIVE_GRACE_MS) {
      if (!started) return;
      started = false;
      stopping = true;
      await closeServer(intake.server(), graceMs, () => app.stop());
    },
  };
}

function intakeFor(
  opts: { config: Pick<Config, 'slack' | 'port'>; oauth?: OAuthSetup | undefined },
  customRoutes: CustomRoute[],
  logger: BoltLogger,
): Intake {
  const { slack, port } = opts.config;
  if (slack.mode === 'socket' && slack.appToken && !opts.oauth)
    return socketIntake(slack.appToken, slack.apiUrl, port, customRoutes, logger);
  const oauth = opts.oauth && oauthReceiverOptions(opts.oauth);
  return httpIntake(slack.signingSecret ?? '', port, customRoutes, logger, oauth);
}

/**
 * How to talk to a workspace outside a request, and who the bot is there: the app's own
 * client and verified identity with one workspace; in distributed mode the install's
 * (./workspace-clients.ts).
 */
function workspaceAccess(
  app: App,
  identity: () => BotIdentity | undefined,
  o: {
    installer: InstallProvider | undefined;
    clientOptions: WebClientOptions;
    log: Logger;
    gone: ((teamId: string) => Promise<SettledWork>) | undefined;
  },
): Pick<SlackApp, 'clientFor' | 'refused' | 'botFor'> {
  const { installer } = o;
  if (!installer)
    return { clientFor: async () => app.client, refused: () => {}, botFor: async () => identity() };
  const clients = createWorkspaceClients({
    authorize: (source) => installer.authorize(source),
    clientOptions: o.clientOptions,
    log: o.log,
    gone: o.gone,
  });
  return {
    clientFor: (ws) => clients.clientFor(ws),
    refused: (ws, client) => clients.refused(ws, client),
    botFor: async (ws) => {
      const userId = await clients.botUserFor(ws).catch((err: unknown) => {
        // No install: no bot there (the workspace's pending work is settled meanwhile).
        if (err instanceof ChatError && err.code === NOT_INSTALLED) return undefined;
        throw err;
      });
      return userId ? { userId } : undefined;
    },
  };
}

/** Single-workspace mode: the bot token works, and who the bot is; then Bolt's own init. */
async function verifyToken(app: App, apiUrl: string): Promise<BotIdentity | undefined> {
  try {
    // Bolt's own check (in init) keeps the bot user's id but not its name: ask once more.
    const auth = await app.client.auth.test();
    await app.init();
    return auth.user_id && auth.user ? { userId: auth.user_id, name: auth.user } : undefined;
  } catch (err) {
    throw new Error(
      `could not verify SLACK_BOT_TOKEN with Slack at ${apiUrl} (${toChatError(err).code})`,
    );
  }
}

/** Thrown for a request whose workspace has no installation; logged once, by ids. */
export class RefusedAuthorization extends Error {
  constructor() {
    super('no installation answers for this workspace');
    this.name = 'RefusedAuthorization';
  }
}

/**
 * Each request's workspace must have an installation (Bolt's installer finds it, refreshing
 * its token when rotation is on): a request of a workspace that never installed Docs Agent,
 * or uninstalled it, reaches no listener. One line per refusal, with the ids only.
 */
function installedOnly(
  installer: InstallProvider,
  log: Logger,
  authorizing: OAuthSetup['authorizing'],
): Authorize<boolean> {
  return async (source) => {
    if (source.teamId) authorizing?.({ teamId: source.teamId, enterpriseId: source.enterpriseId });
    try {
      return await installer.authorize(source);
    } catch (err) {
      const ids = {
        teamId: source.teamId,
        enterpriseId: source.enterpriseId,
        isEnterpriseInstall: source.isEnterpriseInstall,
      };
      const cause = (err as { original?: unknown }).original;
      if (cause instanceof NotInstalled) log.info(ids, 'slack.not_installed');
      else log.warn({ ...ids, err }, 'slack.authorize_failed');
      throw new RefusedAuthorization();
    }
  };
}

/**
 * The receiver, handing every event to `first` before the app sees it. Receivers only ever
 * call the app's `processEvent`, so that is all the stand-in has to offer.
 */
function runningFirst(inner: Receiver, first: (body: unknown) => Promise<void>): Receiver {
  return {
    init(app: App) {
      inner.init({
        processEvent: async (event: ReceiverEvent) => {
          await first(event.body);
          return app.processEvent(event);
        },
      } as unknown as App);
    },
    start: (...args: unknown[]) => inner.start(...args),
    stop: (...args: unknown[]) => inner.stop(...args),
  };
}

/** One endpoint's answer; a failure is a 500 and a log line, never a hung probe. */
function serve(e: Endpoint, res: ServerResponse, log: Logger): void {
  e.answer().then(
    (a) => {
      res.writeHead(a.status, { 'content-type': a.contentType });
      res.end(a.body);
    },
    (err: unknown) => {
      log.error({ err, path: e.path }, 'http.endpoint_failed');
      res.writeHead(500, { 'content-type': 'text/plain' });
      res.end('internal error');
    },
  );
}
