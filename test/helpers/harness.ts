import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { type Bot, type BotOptions, startBot } from '../../src/app/bot.ts';
import { loadConfig } from '../../src/config/config.ts';
import { openStore } from '../../src/store/open.ts';
import { openPostgresStore } from '../../src/store/postgres.ts';
import { openSqliteStore } from '../../src/store/sqlite.ts';
import type { Store } from '../../src/store/types.ts';
import { ApiEmulator } from '../fakes/api-emulator.ts';
import { FakeSlack, type StoredMessage } from '../fakes/slack.ts';
import { FakeSocketMode } from '../fakes/socket-mode.ts';
import { type DistributedOptions, distributedEnv } from './distributed-env.ts';
import { CHANNEL, PROJECT, SECRETS } from './harness-defaults.ts';
import * as send from './harness-payloads.ts';
import { memoryLogger } from './log.ts';
import { eventually, freePort } from './net.ts';
import { createTestDatabase, type TestDatabase } from './postgres.ts';
import { eventCallback } from './slack-requests.ts';

export { CHANNEL, PROJECT, SECRETS, USER } from './harness-defaults.ts';

export interface HarnessOptions {
  mode?: 'http' | 'socket';
  env?: Record<string, string>;
  /** Reuse a database directory (restarts). */
  dir?: string;
  /** The database engine: a SQLite file in `dir` (default) or a fresh PostgreSQL database. */
  engine?: 'sqlite' | 'postgres';
  /**
   * Distributed mode (test/helpers/distributed.ts): installed with OAuth from the fake Slack,
   * no bot token, API key or project in the environment.
   */
  distributed?: DistributedOptions;
}

/** What a test may set of the bot's options when it starts (`apiRetry` over fast defaults). */
export type StartOptions = Pick<
  BotOptions,
  | 'digest'
  | 'apiRetry'
  | 'pendingRootMs'
  | 'channelGapMs'
  | 'updateLimit'
  | 'work'
  | 'lanes'
  | 'forgetSweepMs'
  | 'apiTimeoutMs'
>;

/** Short enough that a crashed replica's work is taken over within a test. */
export const TEST_LEASE_MS = 2_000;

/**
 * The real bot (config → startBot) wired to a fake Slack, a Socket Mode server when asked,
 * and the API emulator, on a real SQLite file. Drives it the way Slack would.
 */
export class Harness {
  readonly slack: FakeSlack;
  readonly api: ApiEmulator;
  readonly socket: FakeSocketMode | undefined;
  readonly dir: string;
  readonly env: Record<string, string>;
  readonly mode: 'http' | 'socket';
  readonly logChunks: string[] = [];
  bot: Bot | undefined;
  /** Further bots on the same database, fakes and config (replicas). */
  readonly replicas: Bot[] = [];
  /** The running bot's own store (not a second connection to its file). */
  botStore: Store | undefined;
  #ownsDir: boolean;
  #database: TestDatabase | undefined;

  private constructor(o: {
    slack: FakeSlack;
    api: ApiEmulator;
    socket: FakeSocketMode | undefined;
    dir: string;
    ownsDir: boolean;
    env: Record<string, string>;
    mode: 'http' | 'socket';
    database: TestDatabase | undefined;
  }) {
    this.slack = o.slack;
    this.api = o.api;
    this.socket = o.socket;
    this.dir = o.dir;
    this.#ownsDir = o.ownsDir;
    this.env = o.env;
    this.mode = o.mode;
    this.#database = o.database;
  }

  static async create(opts: HarnessOptions = {}): Promise<Harness> {
    const mode = opts.mode ?? 'http';
    const socket = mode === 'socket' ? await FakeSocketMode.start() : undefined;
    const slack = await FakeSlack.start(socket ? { socketMode: socket } : {});
    const api = await ApiEmulator.start({
      apiKey: SECRETS.apiKey,
      projectId: PROJECT,
      readOnlyKeys: ['mint_read_only_key_0001'],
    });
    const dir = opts.dir ?? mkdtempSync(join(tmpdir(), 'bot-it-'));
    const database = opts.engine === 'postgres' ? await createTestDatabase() : undefined;
    const port = String(await freePort());
    const workspace = opts.distributed
      ? distributedEnv(slack, port, opts.distributed)
      : { SLACK_BOT_TOKEN: SECRETS.botToken, MINTLIFY_API_KEY: SECRETS.apiKey };
    const env: Record<string, string> = {
      ...workspace,
      SLACK_SIGNING_SECRET: SECRETS.signingSecret,
      SLACK_API_URL: slack.url,
      PORT: port,
      ...(opts.distributed ? {} : { MINTLIFY_PROJECT_ID: PROJECT }),
      MINTLIFY_API_URL: api.url,
      DATABASE_URL: database?.url ?? `sqlite:${join(dir, 'bot.sqlite')}`,
      LEASE_MS: String(TEST_LEASE_MS),
      SLACK_TIMEOUT_MS: String(TEST_LEASE_MS / 2),
      POLL_INTERVAL_MS: '100',
      POLL_MAX_INTERVAL_MS: '400',
      LOG_LEVEL: 'debug',
      ...(mode === 'socket' ? { SLACK_APP_TOKEN: SECRETS.appToken } : {}),
      ...opts.env,
    };
    return new Harness({ slack, api, socket, dir, ownsDir: !opts.dir, env, mode, database });
  }

  get eventsUrl(): string {
    return this.url('/slack/events');
  }

  /** An address on the bot's own HTTP server (PORT). */
  url(path: string): string {
    return `http://127.0.0.1:${this.env.PORT}${path}`;
  }

  /** `apiRetry` is merged over the harness's fast defaults. */
  async start(extra: StartOptions = {}): Promise<void> {
    this.bot = await this.#startBot(this.env, this.logChunks, extra, (store) => {
      this.botStore = store;
    });
    if (this.socket) await this.socket.waitForConnection();
  }

  /**
   * Another replica on the same database and fakes, serving HTTP on its own port (or with
   * its own Socket Mode connection); its log lines go to `chunks`. Returns where to send it
   * signed requests (HTTP mode).
   */
  async startReplica(
    chunks: string[] = [],
    extra: Pick<BotOptions, 'localClock'> = {},
  ): Promise<{ bot: Bot; eventsUrl: string }> {
    const port = String(await freePort());
    const before = this.socket?.openConnections() ?? 0;
    const bot = await this.#startBot({ ...this.env, PORT: port }, chunks, extra);
    this.replicas.push(bot);
    // In Socket Mode the replica opens a connection of its own, as Slack allows.
    if (this.socket)
      await eventually(() => (this.socket?.openConnections() ?? 0) > before, 'its connection');
    return { bot, eventsUrl: `http://127.0.0.1:${port}/slack/events` };
  }

  async #startBot(
    env: Record<string, string>,
    chunks: string[],
    extra: StartOptions & Pick<BotOptions, 'localClock'>,
    onStore: (store: Store) => void = () => {},
  ): Promise<Bot> {
    const r = loadConfig(env);
    if (!r.ok) throw new Error(r.problems.join('\n'));
    return startBot(r.config, {
      logDestination: new Writable({
        write(chunk, _enc, cb) {
          chunks.push(String(chunk));
          cb();
        },
      }),
      apiTimeoutMs: 2_000,
      // Slack's pace and Tier 3 budget, sped up; a test of the limits passes the real ones.
      channelGapMs: 10,
      updateLimit: { perMinute: 6_000, burst: 50 },
      followUpGraceMs: 300,
      troubleAfterMs: 1_000,
      openStore: async (url, log, o) => {
        const store = await openStore(url, log, o);
        onStore(store);
        return store;
      },
      ...extra,
      apiRetry: {
        retries: 2,
        minDelayMs: 10,
        maxDelayMs: 50,
        maxRetryAfterMs: 1_000,
        ...extra.apiRetry,
      },
    });
  }

  async stopBot(): Promise<void> {
    await this.bot?.stop();
    this.bot = undefined;
    this.botStore = undefined;
  }

  async close(): Promise<void> {
    await this.stopBot();
    for (const bot of this.replicas.splice(0)) await bot.stop();
    await this.slack.close();
    await this.api.close();
    await this.socket?.close();
    if (this.#ownsDir) rmSync(this.dir, { recursive: true, force: true });
    await this.#database?.drop();
  }

  get logs(): string {
    return this.logChunks.join('');
  }

  logLines(): Record<string, unknown>[] {
    return this.logs
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Record<string, unknown>);
  }

  /** Opens the bot's database beside it (SQLite's WAL allows a second reader). */
  async openStore(): Promise<Store> {
    const url = this.env.DATABASE_URL ?? '';
    if (url.startsWith('postgres')) return openPostgresStore(url, { log: memoryLogger().log });
    return openSqliteStore(url.slice('sqlite:'.length));
  }

  /** A slash command, as Slack sends it (test/helpers/harness-payloads.ts); answers the ack. */
  command(text: string, o: send.CommandOptions = {}) {
    return send.command(this, text, o);
  }

  /**
   * Runs `/agent <prompt>` and waits for the job to exist and the root message to show it
   * (Working); returns the root and the emulator's job.
   */
  async startJob(prompt = 'Add a quickstart for the Python SDK', o: { user?: string } = {}) {
    const n = this.roots().length;
    const ack = await this.command(prompt, o);
    if (ack.status !== 200) throw new Error(`/agent was answered ${ack.status}`);
    const root = await eventually(() => this.roots()[n], 'root message');
    const job = await eventually(() => this.api.createdJobs()[n], 'job creation');
    await this.rootWorking(root.ts);
    return { root, job };
  }

  /** Waits until the root at `rootTs` has been edited to show its job (Working). */
  async rootWorking(rootTs: string): Promise<void> {
    await eventually(
      () =>
        this.slack
          .callsTo('chat.update')
          .some((c) => c.args.ts === rootTs && String(c.args.text).startsWith('Working')),
      'the root showing the job',
    );
  }

  /** A person replies in a thread: the message lands in Slack, then Slack sends the event. */
  reply(threadTs: string, text: string, o: Parameters<typeof send.reply>[3] = {}) {
    return send.reply(this, threadTs, text, o);
  }

  /** Delivers an Events API envelope (a redelivery carries a retry number). */
  deliverEvent(body: Record<string, unknown>, retryNum?: number) {
    return send.deliverEvent(this, body, retryNum);
  }

  event(inner: Record<string, unknown>) {
    return eventCallback(inner);
  }

  /** A click on a button of a message the bot posted; answers the ack and its response id. */
  click(messageTs: string, actionId: string, o: Parameters<typeof send.click>[3] = {}) {
    return send.click(this, messageTs, actionId, o);
  }

  /** A choice in an overflow menu (⋯) of a message the bot posted; answers what `click` does. */
  choose(messageTs: string, value: string, o: Parameters<typeof send.choose>[3] = {}) {
    return send.choose(this, messageTs, value, o);
  }

  /** Someone submits a modal the bot opened, with these input values. */
  submitView(
    view: Record<string, unknown>,
    values: Record<string, Record<string, string | null>>,
    o: Parameters<typeof send.submitView>[3] = {},
  ) {
    return send.submitView(this, view, values, o);
  }

  /** An interaction payload: form-encoded `payload=` over HTTP, `interactive` over Socket Mode. */
  interact(payload: Record<string, unknown>, url?: string) {
    return send.interact(this, payload, url);
  }

  /** Posts as the bot, straight to the fake Slack: what a bot that died right after did. */
  async postAsBot(args: Record<string, unknown>): Promise<string> {
    const res = await fetch(`${this.slack.url}chat.postMessage`, {
      method: 'POST',
      headers: { authorization: `Bearer ${SECRETS.botToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({ channel: CHANNEL, ...args }),
    });
    const body = (await res.json()) as { ok: boolean; ts?: string; error?: string };
    if (!body.ok || !body.ts) throw new Error(`postAsBot: ${body.error}`);
    return body.ts;
  }

  /** Root messages the bot posted in a channel (not thread replies). */
  roots(channel = CHANNEL): StoredMessage[] {
    return this.slack.history(channel).filter((m) => m.user === 'UBOT' && !m.thread_ts);
  }

  /** The bot's replies in a thread. */
  botReplies(threadTs: string, channel = CHANNEL): StoredMessage[] {
    return this.slack
      .thread(channel, threadTs)
      .filter((m) => m.user === 'UBOT' && m.ts !== threadTs);
  }
}
