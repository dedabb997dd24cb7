import type { ServerResponse } from 'node:http';
import { App, HTTPReceiver, type Receiver, SocketModeReceiver } from '@slack/bolt';
import type { WebClientOptions } from '@slack/web-api';
import type { Config } from '../config.ts';
import { boltLogger, type Logger } from '../log.ts';
import { toChatError } from './chat.ts';

export interface SlackApp {
  app: App;
  start(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * The Bolt app: Socket Mode when an app token is configured, otherwise HTTP with
 * `POST /slack/events`. Both serve `GET /healthz` on PORT.
 */
export function createSlackApp(opts: {
  config: Pick<Config, 'slack' | 'port'>;
  log: Logger;
  health: () => { ok: boolean; detail?: Record<string, unknown> };
}): SlackApp {
  const { slack, port } = opts.config;
  const logger = boltLogger(opts.log.child({ component: 'bolt' }));
  const clientOptions: WebClientOptions = {
    slackApiUrl: slack.apiUrl,
    // The notifier's outbox owns retries (checking the thread before posting again); a
    // client-side resend of chat.postMessage after a 5xx could post twice. Rate-limited
    // calls are rejected, not queued, so the caller decides when to ask again.
    rejectRateLimitedCalls: true,
    retryConfig: { retries: 0 },
    // No call may hang the single notifier loop.
    timeout: 15_000,
  };
  const customRoutes = [
    {
      path: '/healthz',
      method: ['GET'],
      handler: (_req: unknown, res: ServerResponse) => {
        const h = opts.health();
        res.writeHead(h.ok ? 200 : 503, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ status: h.ok ? 'ok' : 'unhealthy', ...h.detail }));
      },
    },
  ];

  let receiver: Receiver;
  if (slack.mode === 'socket' && slack.appToken) {
    receiver = new SocketModeReceiver({
      appToken: slack.appToken,
      logger,
      customRoutes,
      installerOptions: { port, clientOptions: { slackApiUrl: slack.apiUrl } },
    });
  } else {
    receiver = new HTTPReceiver({
      signingSecret: slack.signingSecret ?? '',
      endpoints: '/slack/events',
      port,
      customRoutes,
      logger,
      processBeforeResponse: false,
    });
  }

  // Deferred so that a bad token or an unreachable Slack is a readable start-up error
  // rather than an unhandled rejection from inside the constructor.
  const app = new App({
    receiver,
    token: slack.botToken,
    logger,
    clientOptions,
    ignoreSelf: true,
    deferInitialization: true,
  });
  return {
    app,
    async start() {
      try {
        await app.init();
      } catch (err) {
        throw new Error(
          `could not verify SLACK_BOT_TOKEN with Slack at ${slack.apiUrl} (${toChatError(err).code})`,
        );
      }
      await app.start(port);
    },
    async stop() {
      await app.stop();
    },
  };
}
