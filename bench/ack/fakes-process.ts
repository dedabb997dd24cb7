/**
 * The ack benchmark's stand-ins for Slack and the agent API, in a process of their own so
 * that serving the bot's Web API calls never competes with the load generator's clock.
 * Talks to its parent over IPC: `{ socketUrls, latency }` in, `{ slackUrl, apiUrl }` out, then
 * `{ responseUrls: n }` → `{ urls }`.
 */
import { ApiEmulator } from '../../test/fakes/api-emulator.ts';
import { type LatencyName, latencyProfile } from '../../test/fakes/latency.ts';
import { FakeSlack } from '../../test/fakes/slack.ts';

interface Start {
  apiKey: string;
  projectId: string;
  /** Ticketed Socket Mode URLs issued by the parent's FakeSocketMode, handed out in turn. */
  socketUrls: string[];
  /** The profile both fakes answer at (test/fakes/latency.ts). */
  latency: LatencyName;
}

const send = (m: unknown) => process.send?.(m);
let slack: FakeSlack | undefined;
let api: ApiEmulator | undefined;

process.on('message', async (m: { start?: Start; responseUrls?: number }) => {
  if (m.start) {
    const urls = [...m.start.socketUrls];
    slack = await FakeSlack.start({
      socketMode: {
        connectionUrl: () => {
          const url = urls.shift();
          if (!url) throw new Error('the benchmark issued no more Socket Mode tickets');
          return url;
        },
      },
    });
    api = await ApiEmulator.start({ apiKey: m.start.apiKey, projectId: m.start.projectId });
    slack.useLatency(latencyProfile(m.start.latency));
    api.useLatency(latencyProfile(m.start.latency));
    send({ slackUrl: slack.url, apiUrl: api.url });
  } else if (m.responseUrls !== undefined && slack) {
    const fake = slack;
    send({ urls: Array.from({ length: m.responseUrls }, () => fake.responseUrl()) });
  }
});
process.on('disconnect', async () => {
  await slack?.close();
  await api?.close();
  process.exit(0);
});
