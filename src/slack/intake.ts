import { once } from 'node:events';
import type { Server } from 'node:http';
import {
  type Logger as BoltLogger,
  type CustomRoute,
  HTTPReceiver,
  type Receiver,
  SocketModeReceiver,
} from '@slack/bolt';
import type { OAuthReceiverOptions } from './oauth.ts';

/**
 * How Slack's requests reach the Bolt app: Socket Mode, or HTTP on PORT (with, in
 * distributed mode, the OAuth install and its callback); and how the HTTP server closes.
 */

export const EVENTS_PATH = '/slack/events';

/** Bolt's OAuth installer, as HTTPReceiver builds it. */
export type InstallProvider = NonNullable<HTTPReceiver['installer']>;

export interface Intake {
  receiver: Receiver;
  /** Told what `app.start()` resolved with. */
  started(result: unknown): void;
  connected(): boolean;
  stop(): Promise<void>;
  /** The HTTP server on PORT (Slack's requests, or only the endpoints in Socket Mode). */
  server(): Server | undefined;
  /** Bolt's OAuth installer (distributed mode): installs, and each workspace's tokens. */
  installer?: InstallProvider;
}

/**
 * Stops the app (which closes `server`) and waits for the server to be closed: idle
 * keep-alive connections are closed at once, and whatever connection is still open after
 * `graceMs` (a request never finished) is cut.
 */
export async function closeServer(
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

export function httpIntake(
  signingSecret: string,
  port: number,
  customRoutes: CustomRoute[],
  logger: BoltLogger,
  oauth?: OAuthReceiverOptions,
): Intake {
  const receiver = new HTTPReceiver({
    signingSecret,
    endpoints: EVENTS_PATH,
    port,
    customRoutes,
    logger,
    processBeforeResponse: false,
    ...oauth?.options,
  });
  let server: Server | undefined;
  let closing = false;
  // Slack's requests, and in distributed mode the install and its callback: refused once
  // stopping, checked before the body is read or verified (nothing of them is acted on).
  const intakePaths = new Set([EVENTS_PATH, ...(oauth?.paths ?? [])]);
  const route = receiver.requestListener;
  receiver.requestListener = (req, res) => {
    if (closing && intakePaths.has(new URL(req.url ?? '/', 'http://localhost').pathname)) {
      res.writeHead(503, { 'content-type': 'application/json', connection: 'close' });
      res.end(JSON.stringify({ error: 'shutting_down' }));
      return;
    }
    return route(req, res);
  };
  return {
    receiver,
    ...(receiver.installer ? { installer: receiver.installer } : {}),
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

export function socketIntake(
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
