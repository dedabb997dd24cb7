/**
 * The baseline: a Bolt app whose `/agent` handler only acks, started like the bot (same
 * receiver, same port, same fake Slack) from the same environment variables.
 */
import { App, HTTPReceiver, LogLevel, SocketModeReceiver } from '@slack/bolt';

const env = process.env;
const port = Number(env.PORT);
const healthz = {
  path: '/healthz',
  method: ['GET'],
  handler: (_req: unknown, res: import('node:http').ServerResponse) => {
    res.writeHead(200).end('ok');
  },
};
const receiver = env.SLACK_APP_TOKEN
  ? new SocketModeReceiver({
      appToken: env.SLACK_APP_TOKEN,
      customRoutes: [healthz],
      installerOptions: { port, clientOptions: { slackApiUrl: env.SLACK_API_URL } },
      logLevel: LogLevel.ERROR,
    })
  : new HTTPReceiver({
      signingSecret: env.SLACK_SIGNING_SECRET ?? '',
      endpoints: '/slack/events',
      port,
      customRoutes: [healthz],
      logLevel: LogLevel.ERROR,
    });
const app = new App({
  receiver,
  token: env.SLACK_BOT_TOKEN,
  clientOptions: { slackApiUrl: env.SLACK_API_URL },
  logLevel: LogLevel.ERROR,
});
app.command('/agent', async ({ ack }) => {
  await ack();
});
await app.start(port);
process.on('SIGTERM', async () => {
  await app.stop();
  process.exit(0);
});
