/**
 * The fairness benchmark's world: a fresh PostgreSQL database, the fake Slack with one
 * workspace per team (each its own bot token, issued by its install) and the API emulator
 * with one project per workspace (each its own admin key), and the bot in distributed mode as
 * `npm start` runs it (the package's prestart and start scripts), one process per replica.
 *
 * Workspaces are installed through the real path (GET /slack/install on the bot, the fake
 * Slack's Allow page, the bot's OAuth callback with its state cookie: oauth.v2.access, the
 * installation sealed into the store). Their docs projects are connected through the vault
 * the bot itself uses (src/workspaces/vault.ts, the same keys), not the App Home's modal: the
 * modal's own cost (one read of the project) is not what this benchmark measures.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Keyring } from '../src/sealed.ts';
import { openPostgresStore } from '../src/store/postgres.ts';
import type { Store } from '../src/store/types.ts';
import { createVault } from '../src/workspaces/vault.ts';
import { ApiEmulator } from '../test/fakes/api-emulator.ts';
import { FakeSlack, SLACK_APP } from '../test/fakes/slack.ts';
import { freePort, sleep } from '../test/helpers/net.ts';
import { createTestDatabase, type TestDatabase } from '../test/helpers/postgres.ts';
import {
  answers,
  type BotProcess,
  commandLine,
  descendants,
  spawnNpmStart,
} from '../test/helpers/process.ts';
import { formEncode, signSlackRequest, slashCommand } from '../test/helpers/slack-requests.ts';
import { benchBotEnv, MB, PROJECT, SECRETS, silentLogger } from './measure.ts';

/** ENCRYPTION_KEYS of the benchmark's bots (32 bytes of 7s): made up, like every secret here. */
const KEY = { id: 'k1', key: Buffer.alloc(32, 7) };
const ENCRYPTION_KEYS = `${KEY.id}:${KEY.key.toString('base64')}`;
const STATE_SECRET = 'bench-state-secret-0123456789abcdef0123456789';

export interface Workspace {
  team: string;
  /** Channels the bot is in: where its jobs' threads are, and where commands come from. */
  channels: string[];
  /** The person who installs. */
  user: string;
  /** Everyone who sends commands (one each, so that each one's private answers are told apart). */
  users: string[];
  projectId: string;
  apiKey: string;
}

export function workspace(team: string, channels: string[], people = 1): Workspace {
  const users = Array.from({ length: people }, (_, i) => `U${team.slice(1)}x${i}`);
  return {
    team,
    channels,
    user: users[0]!,
    users,
    projectId: `proj_${team.toLowerCase()}`,
    apiKey: `mint_bench_${team.toLowerCase()}_key_0123456789abcdef`,
  };
}

/** One replica: `npm start` and the bot's node process under it. */
export interface Replica {
  npm: BotProcess;
  /** The bot's node process (not npm's). */
  pid: number;
  port: number;
  eventsUrl: string;
}

export interface World {
  db: TestDatabase;
  slack: FakeSlack;
  api: ApiEmulator;
  replicas: Replica[];
}

export async function openWorld(workspaces: Workspace[]): Promise<World> {
  const db = await createTestDatabase();
  const slack = await FakeSlack.start();
  const api = await ApiEmulator.start({ apiKey: SECRETS.apiKey, projectId: PROJECT });
  for (const [i, w] of workspaces.entries()) {
    slack.addWorkspace({
      team: w.team,
      name: `Workspace ${w.team}`,
      botUser: `UBOT${i}`,
      channels: w.channels,
      users: w.users,
    });
    api.addProject(w.projectId, w.apiKey);
  }
  return { db, slack, api, replicas: [] };
}

export async function closeWorld(w: World): Promise<void> {
  try {
    await stopReplicas(w);
  } finally {
    await w.slack.close();
    await w.api.close();
    await w.db.drop();
  }
}

/** Distributed mode's environment, as docs/configuration.md has a deployment set it. */
function botEnv(w: World, port: number): Record<string, string> {
  return {
    SLACK_CLIENT_ID: SLACK_APP.clientId,
    SLACK_CLIENT_SECRET: SLACK_APP.clientSecret,
    SLACK_STATE_SECRET: STATE_SECRET,
    SLACK_SIGNING_SECRET: SECRETS.signingSecret,
    ENCRYPTION_KEYS,
    SLACK_API_URL: w.slack.url,
    MINTLIFY_API_URL: w.api.url,
    DATABASE_URL: w.db.url,
    PORT: String(port),
    // Its lines would pile up in this process (a line per job and announcement).
    LOG_LEVEL: 'warn',
    ...benchBotEnv(),
  };
}

/** Starts `count` replicas of the bot on the world's database, each once /healthz answers. */
export async function startReplicas(w: World, count: number): Promise<void> {
  const starting = Array.from({ length: count }, async () => {
    const port = await freePort();
    const npm = spawnNpmStart(botEnv(w, port));
    try {
      await answers(`http://127.0.0.1:${port}/healthz`, 60_000);
    } catch (err) {
      process.stderr.write(npm.output().slice(-2_000));
      npm.child.kill('SIGKILL');
      throw err;
    }
    const pid = descendants(npm.child.pid!).find((p) =>
      /\bnode\b.*\.js\b/.test(commandLine(p) ?? ''),
    );
    if (!pid) throw new Error('no node process under npm start');
    return { npm, pid, port, eventsUrl: `http://127.0.0.1:${port}/slack/events` };
  });
  w.replicas.push(...(await Promise.all(starting)));
  // Installs come back to the first replica's callback (the app's Redirect URL).
  w.slack.configureApp({
    redirectUrls: [`http://127.0.0.1:${w.replicas[0]!.port}/slack/oauth_redirect`],
  });
}

/** SIGTERM to each npm (as a process manager sends it); SIGKILL to what lingers. */
export async function stopReplicas(w: World): Promise<void> {
  const stopping = w.replicas.map(async (r) => {
    const tree = [r.npm.child.pid!, ...descendants(r.npm.child.pid!)];
    r.npm.child.kill('SIGTERM');
    const timer = setTimeout(() => {
      for (const pid of tree)
        try {
          process.kill(pid, 'SIGKILL');
        } catch {} // gone
    }, 20_000);
    await r.npm.exited.finally(() => clearTimeout(timer));
    // BENCH_FAIRNESS_LOGS=<dir>: each replica's output (with BENCH_BOT_ENV=LOG_LEVEL=debug).
    const dir = process.env.BENCH_FAIRNESS_LOGS;
    if (dir) writeFileSync(join(dir, `replica-${r.pid}.log`), r.npm.output());
  });
  w.replicas.length = 0;
  await Promise.all(stopping);
}

/** A person installs the app in a browser, through the first replica: the real OAuth path. */
export async function install(w: World, ws: Workspace): Promise<void> {
  const bot = w.replicas[0]!;
  w.slack.installAs({ team: ws.team, user: ws.user });
  const start = await fetch(`http://127.0.0.1:${bot.port}/slack/install`, { redirect: 'manual' });
  const cookie = (start.headers.get('set-cookie') ?? '').split(';')[0] ?? '';
  const allow = await fetch(start.headers.get('location') ?? '', { redirect: 'manual' });
  const back = (allow.headers.get('location') ?? '').replace(
    /^https?:\/\/[^/]+/,
    `http://127.0.0.1:${bot.port}`,
  );
  const done = await fetch(back, { redirect: 'manual', headers: { cookie } });
  await done.text();
  if (done.status >= 400)
    throw new Error(`install of ${ws.team}: the callback answered ${done.status}`);
}

/** Each workspace's docs project and key, sealed through the bot's vault with its keys. */
export async function connectDocs(w: World, workspaces: Workspace[]): Promise<void> {
  const store = await openPostgresStore(w.db.url, { log: silentLogger() });
  try {
    const vault = createVault(store, new Keyring([KEY]), { retentionDays: 30 });
    for (const ws of workspaces) {
      if (!(await vault.findInstallation({ teamId: ws.team })))
        throw new Error(`${ws.team} is not installed`);
      await vault.connectDocs(
        { teamId: ws.team },
        { projectId: ws.projectId, apiKey: ws.apiKey, connectedBy: ws.user },
      );
    }
  } finally {
    await store.close();
  }
}

/** A store over the world's database, for reading what the bots recorded. */
export function openStore(w: World): Promise<Store> {
  return openPostgresStore(w.db.url, { log: silentLogger() });
}

/** A signed slash command from a workspace to a replica; resolves with the ack's body. */
export async function command(
  r: Replica,
  f: { team: string; user: string; channel: string; text: string; responseUrl: string },
): Promise<string> {
  const body = formEncode(
    slashCommand({
      text: f.text,
      team_id: f.team,
      user_id: f.user,
      channel_id: f.channel,
      response_url: f.responseUrl,
    }),
  );
  const res = await fetch(r.eventsUrl, {
    method: 'POST',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      ...signSlackRequest(SECRETS.signingSecret, body),
    },
    body,
  });
  const text = await res.text();
  if (res.status !== 200) throw new Error(`${f.team}: the ack answered ${res.status}`);
  return text;
}

/** The resident set (VmRSS) of a process, MB. */
export function rssMb(pid: number): number {
  const kb = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
  return kb ? (Number(kb) * 1024) / MB : Number.NaN;
}

/** Samples each replica's RSS every `everyMs` until stopped; answers the samples. */
export function sampleRss(w: World, everyMs = 500): { stop: () => number[][] } {
  const samples = w.replicas.map(() => [] as number[]);
  const take = () => {
    for (const [i, r] of w.replicas.entries()) samples[i]!.push(rssMb(r.pid));
  };
  const timer = setInterval(take, everyMs);
  return {
    stop: () => {
      clearInterval(timer);
      take();
      return samples;
    },
  };
}

export { sleep };
