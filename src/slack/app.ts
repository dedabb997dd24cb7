import { once } from 'node:events';
import type { Server, ServerResponse } from 'node:http';
import {
  App,
  type Logger as BoltLogger,
  type CustomRoute,
  HTTPReceiver,
  type Receiver,
  type ReceiverEvent,
  SocketModeReceiver,
} from '@slack/bolt';
import type { WebClientOptions } from '@slack/web-api';
import type { Config } from '../config/config.ts';
import { boltLogger, type Logger } from '../log.ts';
import { toChatError } from './chat.ts';

const EVENTS_PATH = '/slack/events';
/**
 * How long a connection still in the middle of a request may take to finish once the HTTP
 * server closes; idle keep-alive connections are closed at once.
 */
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

export const KEEP_ALIVE_GRACE_MS = 1_000;

/** Who the bot is in this workspace, as auth.test answered at start-up. */
export interface BotIdentity {
  /** The bot user's id (`user_id`): mentions of the bot read `<@userId>`. */
  userId: string;
  /** The bot user's name (`user`): what `/invite @name` takes. */
  name: string;
}

export interface SlackApp {
  app: App;
  /** Known once `start()` has verified the token; undefined before. */
  identity(): BotIdentity | undefined;
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
 * `POST /slack/events`. Both serve the given endpoints (GET) on PORT.
 */
export function createSlackApp(opts: {
  config: Pick<Config, 'slack' | 'port'>;
  log: Logger;
  endpoints: Endpoint[];
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
  const intake =
    slack.mode === 'socket' && slack.appToken
      ? socketIntake(slack.appToken, slack.apiUrl, port, customRoutes, logger)
      : httpIntake(slack.signingSecret ?? '', port, customRoutes, logger);

  const hooks: ((body: unknown) => Promise<void>)[] = [];
  // Deferred so that a bad token or an unreachable Slack is a readable start-up error
  // rather than an unhandled rejection from inside the constructor.
  const app = new App({
    receiver: runningFirst(intake.receiver, async (body) => {
      for (const hook of hooks) await hook(body);
    }),
    token: slack.botToken,
    logger,
    clientOptions,
    ignoreSelf: true,
    deferInitialization: true,
  });
  let started = false;
  let stopping = false;
  let identity: BotIdentity | undefined;
  return {
    app,
    identity: () => identity,
    beforeAck: (hook) => {
      hooks.push(hook);
    },
    async start() {
      try {
        // Bolt's own check (in init) keeps the bot user's id but not its name: ask once more.
        const auth = await app.client.auth.test();
        if (auth.user_id && auth.user) identity = { userId: auth.user_id, name: auth.user };
        await app.init();
      } catch (err) {
        throw new Error(
          `could not verify SLACK_BOT_TOKEN with Slack at ${slack.apiUrl} (${toChatError(err).code})`,
        );
      }
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

interface Intake {
  receiver: Receiver;
  /** Told what `app.start()` resolved with. */
  started(result: unknown): void;
  connected(): boolean;
  stop(): Promise<void>;
  /** The HTTP server on PORT (Slack's requests, or only the endpoints in Socket Mode). */
  server(): Server | undefined;
}

/**
 * Stops the app (which closes `server`) and waits for the server to be closed: idle
 * keep-alive connections are closed at once, and whatever connection is still open after
 * `graceMs` (a request never finished) is cut.
 */
async function closeServer(
  server: Server | undefined,
  graceMs: number,
  stopApp: () => Promise<unknown>,
): Promise<void> {
  if (!server?.listening) {
    await stopApp();
    return;
  }
  const closed = once(server, 'close').catch(() => undefined);
  const timer = setTimeout(() => server.closeAllConnections(), graceMs);
  try {
    const stopping = stopApp();
    server.closeIdleConnections();
    await stopping;
    await closed;
  } finally {
    clearTimeout(timer);
  }
}

function httpIntake(
  signingSecret: string,
  port: number,
  customRoutes: CustomRoute[],
  logger: BoltLogger,
): Intake {
  const receiver = new HTTPReceiver({
    signingSecret,
    endpoints: EVENTS_PATH,
    port,
    customRoutes,
    logger,
    processBeforeResponse: false,
  });
  let server: Server | undefined;
  let closing = false;
  // Checked before the body is read or verified: nothing of a refused request is acted on.
  const route = receiver.requestListener;
  receiver.requestListener = (req, res) => {
    if (closing && new URL(req.url ?? '/', 'http://localhost').pathname === EVENTS_PATH) {
      res.writeHead(503, { 'content-type': 'application/json', connection: 'close' });
      res.end(JSON.stringify({ error: 'shutting_down' }));
      return;
    }
    return route(req, res);
  };
  return {
    receiver,
    started: (result) => {
      server = result as Server;
    },
    connected: () => server?.listening === true,
    stop: async () => {
      closing = true;
    },
    server: () => server,
  };
}

function socketIntake(
  appToken: string,
  apiUrl: string,
  port: number,
  customRoutes: CustomRoute[],
  logger: BoltLogger,
): Intake {
  const receiver = new SocketModeReceiver({
    appToken,
    logger,
    customRoutes,
    installerOptions: { port, clientOptions: { slackApiUrl: apiUrl } },
  });
  let connected = false;
  receiver.client.on('connected', () => {
    connected = true;
  });
  // 'close' is the socket going away; the others are the client's own state changes.
  for (const state of ['close', 'connecting', 'reconnecting', 'disconnecting', 'disconnected'])
    receiver.client.on(state, () => {
      connected = false;
    });
  return {
    receiver,
    started: () => {},
    connected: () => connected,
    stop: async () => {
      await receiver.client.disconnect();
    },
    // Bolt keeps it private; it serves the endpoints (customRoutes) on PORT.
    server: () => (receiver as unknown as { httpServer?: Server }).httpServer,
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
