import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ApiEmulator } from '../fakes/api-emulator.ts';
import { type LatencyName, type LatencyProfile, latencyProfile } from '../fakes/latency.ts';
import { FakeSlack } from '../fakes/slack.ts';
import { TcpProxy } from '../fakes/tcp-proxy.ts';
import { PROJECT, SECRETS } from '../helpers/harness.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/postgres.ts';
import { Prng } from './prng.ts';

/**
 * What a chaos world is made of before any bot runs: the fakes in this process, the
 * database, the links to break, and the environment every bot starts with.
 */

export type Engine = 'sqlite' | 'postgres';

export interface WorldOptions {
  engine: Engine;
  seed: number;
  /** Where progress and the summary go (stdout for the CLI, console for vitest). */
  out?: (line: string) => void;
  env?: Record<string, string>;
  /**
   * How long the fakes take to answer (test/fakes/latency.ts); default `CHAOS_LATENCY` or
   * `realistic`: Slack 100 ms a call, create and follow-up 1 s, GET 150 ms, ±20 %.
   */
  latency?: LatencyName;
}

/** A network link the world can break: bot → proxy → API emulator or PostgreSQL. */
export interface Link {
  name: 'api' | 'db';
  proxy: TcpProxy;
}

export interface WorldParts {
  engine: Engine;
  rng: Prng;
  slack: FakeSlack;
  api: ApiEmulator;
  /** The bots' environment (PORT aside). */
  env: Record<string, string>;
  database: TestDatabase | undefined;
  /** A temp folder, removed on close: the SQLite file lives here. */
  dir: string;
  out: (line: string) => void;
  latency: LatencyProfile;
  /**
   * The links the bots talk to the API (and, on PostgreSQL, to the database) through: a
   * real TCP proxy each, healthy unless a scenario breaks it.
   */
  links: Link[];
}

/** Starts the fakes, the database and the links of a new world. */
export async function startWorldParts(o: WorldOptions): Promise<WorldParts> {
  const latency = latencyProfile(o.latency ?? process.env.CHAOS_LATENCY ?? 'realistic');
  const { slack, api } = await startFakes(latency, o.seed);
  const dir = mkdtempSync(join(tmpdir(), 'bot-chaos-'));
  const database = o.engine === 'postgres' ? await createTestDatabase() : undefined;
  const links = await startLinks(api, database);
  return {
    engine: o.engine,
    rng: new Prng(o.seed),
    slack,
    api,
    env: { ...botEnv({ slack, api, database, dir, latency, links }), ...o.env },
    database,
    dir,
    out: o.out ?? ((line: string) => process.stdout.write(`${line}\n`)),
    latency,
    links,
  };
}

async function startFakes(
  latency: LatencyProfile,
  seed: number,
): Promise<{ slack: FakeSlack; api: ApiEmulator }> {
  const slack = await FakeSlack.start();
  const api = await ApiEmulator.start({ apiKey: SECRETS.apiKey, projectId: PROJECT });
  // A small site keeps a digest's analytics requests few and quick.
  api.setSite({ paths: 300 });
  slack.useLatency(latency);
  api.useLatency(latency);
  slack.seedLatency(seed);
  api.seedLatency(seed);
  return { slack, api };
}

/** A proxy in front of the API emulator, and in front of PostgreSQL when there is one. */
async function startLinks(api: ApiEmulator, database: TestDatabase | undefined): Promise<Link[]> {
  const apiUrl = new URL(api.url);
  const links: Link[] = [
    {
      name: 'api',
      proxy: await TcpProxy.start({ host: apiUrl.hostname, port: Number(apiUrl.port) }),
    },
  ];
  if (database) {
    const db = new URL(database.url);
    const proxy = await TcpProxy.start({ host: db.hostname, port: Number(db.port || 5432) });
    links.push({ name: 'db', proxy });
  }
  return links;
}

function botEnv(
  p: Pick<WorldParts, 'slack' | 'api' | 'database' | 'dir' | 'latency' | 'links'>,
): Record<string, string> {
  const [apiLink, dbLink] = [p.links[0]?.proxy, p.links[1]?.proxy];
  return {
    SLACK_BOT_TOKEN: SECRETS.botToken,
    SLACK_SIGNING_SECRET: SECRETS.signingSecret,
    SLACK_API_URL: p.slack.url,
    MINTLIFY_API_KEY: SECRETS.apiKey,
    MINTLIFY_PROJECT_ID: PROJECT,
    MINTLIFY_API_URL: apiLink ? apiLink.rewrite(p.api.url) : p.api.url,
    DATABASE_URL:
      p.database && dbLink ? dbLink.rewrite(p.database.url) : `sqlite:${join(p.dir, 'bot.sqlite')}`,
    POLL_INTERVAL_MS: '100',
    POLL_MAX_INTERVAL_MS: '400',
    // Short, so that work a killed bot held is taken over soon; at realistic latency long
    // enough for a create (1 s ± 20 %) and a slow link inside its deadline (0.8 × lease).
    LEASE_MS: p.latency.name === 'zero' ? '2000' : '4000',
    SLACK_TIMEOUT_MS: '1000',
    // A black hole of a few seconds outlasts it: the bot's timeouts are part of the test.
    DATABASE_TIMEOUT_MS: '2000',
    LOG_LEVEL: 'debug',
  };
}
