import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ApiEmulator, type Fault as ApiFault, type EmulatedJob } from '../fakes/api-emulator.ts';
import { type LatencyName, type LatencyProfile, latencyProfile } from '../fakes/latency.ts';
import { FakeSlack, type Fault as SlackFault, type StoredMessage } from '../fakes/slack.ts';
import { TcpProxy } from '../fakes/tcp-proxy.ts';
import { CHANNEL, PROJECT, SECRETS, USER } from '../helpers/harness.ts';
import { freePort } from '../helpers/net.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/postgres.ts';
import {
  formEncode,
  messageEvent,
  signSlackRequest,
  slashCommand,
} from '../helpers/slack-requests.ts';
import { ageDatabase } from './age-database.ts';
import { answerWaits } from './answer-wait.ts';
import { BotProcess } from './bot-process.ts';
import { Prng } from './prng.ts';

export type Engine = 'sqlite' | 'postgres';

/** Event type of announcement metadata (src/slack/blocks.ts), read back from the fake. */
const ANNOUNCEMENT_EVENT = 'docs_agent_announcement';
/** Announcement keys of the "your follow-up may not have gone through" notice start so. */
const REPLY_NOTICE_PREFIX = 'reply:';
export const DIGEST_CHANNEL = 'C0DIGEST';
/** Slack waits this long for an ack (commands and events) before it gives up. */
const SLACK_ACK_MS = 3_000;
/** Slack redelivers an event that was not acked, up to three times. */
const SLACK_EVENT_RETRIES = 3;
/** "Later": far enough that interrupted starts (5 min) and digest claims (15 min) are stale. */
export const LATER_MS = 16 * 60_000;
const HOUR_MS = 3_600_000;
/** Agent uses (creates + messages) per project per hour, the service's documented budget. */
const AGENT_BUDGET = 100;
/**
 * Settling gives up when nothing at all happened in Slack or at the service for this long.
 * Scenarios with more than a batch (20) of pending posts pass a longer one: the notifier
 * sleeps 30 s before the next batch (a finding of this suite, see the report).
 */
const STALL_MS = 12_000;

export interface CommandRecord {
  prompt: string;
  channel: string;
  via: string;
  /** Did the bot answer Slack within 3 s? If not, Slack showed the person an error. */
  acked: boolean;
  at: number;
  /** The id of the response_url sent with it (the fake records posts to it by id). */
  responseId: string;
  /** When an ack with text (usage, busy) came back: the person saw that at once. */
  ackTextAt?: number | undefined;
}

export interface ReplyRecord {
  channel: string;
  threadTs: string;
  ts: string;
  text: string;
  body: Record<string, unknown>;
  /** Deliveries tried (Slack's first attempt and its retries). */
  attempts: number;
  acked: boolean;
  /** When the person sent it. */
  at: number;
}

export interface Violation {
  kind: 'duplicate' | 'lost' | 'other';
  what: string;
}

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

/**
 * One chaos world: a fake Slack and the API emulator in this process, a database (a SQLite
 * file or a fresh PostgreSQL database), and the bots as child processes on it. It plays
 * Slack's part faithfully (commands answered within 3 s or the person sees an error; events
 * redelivered when not acked, up to three times), drives the jobs through the emulator, and
 * checks the invariants from the fakes' state: what people would see in Slack and what the
 * service received, never the bot's own account of it.
 */
export class ChaosWorld {
  /** Worlds not closed yet: an interrupted `npm run chaos` closes them (bots, database). */
  static readonly open = new Set<ChaosWorld>();
  readonly engine: Engine;
  readonly rng: Prng;
  readonly slack: FakeSlack;
  readonly api: ApiEmulator;
  readonly bots = new Map<string, BotProcess>();
  readonly commands: CommandRecord[] = [];
  readonly replies: ReplyRecord[] = [];
  readonly stats = { iterations: 0, kills: 0, sigterms: 0, slackFaults: 0, netFaults: 0 };
  readonly extra: Record<string, number | string> = {};
  readonly out: (line: string) => void;
  readonly latency: LatencyProfile;
  /**
   * The links the bots talk to the API (and, on PostgreSQL, to the database) through: a
   * real TCP proxy each, healthy unless a scenario breaks it.
   */
  readonly links: Link[];
  /** How far ahead of the real clock the bots run (only ever grows, like time). */
  clockOffsetMs = 0;
  /** How far the PostgreSQL database's timestamps were moved back so far (see startBot). */
  #agedMs = 0;
  digest = false;
  /** Whether every job must be finished and announced at the end (not in the budget run). */
  jobsMustFinish = true;
  #env: Record<string, string>;
  #ports = new Map<string, number>();
  #database: TestDatabase | undefined;
  #dir: string;
  #seq = 0;
  #prSeq = 0;
  #usesAtOffset = 0;
  #dead: BotProcess[] = [];

  private constructor(o: {
    engine: Engine;
    rng: Prng;
    slack: FakeSlack;
    api: ApiEmulator;
    env: Record<string, string>;
    database: TestDatabase | undefined;
    dir: string;
    out: (line: string) => void;
    latency: LatencyProfile;
    links: Link[];
  }) {
    this.engine = o.engine;
    this.rng = o.rng;
    this.slack = o.slack;
    this.api = o.api;
    this.#env = o.env;
    this.#database = o.database;
    this.#dir = o.dir;
    this.out = o.out;
    this.latency = o.latency;
    this.links = o.links;
  }

  static async create(o: WorldOptions): Promise<ChaosWorld> {
    const slack = await FakeSlack.start();
    const api = await ApiEmulator.start({ apiKey: SECRETS.apiKey, projectId: PROJECT });
    // A small site keeps a digest's analytics requests few and quick.
    api.setSite({ paths: 300 });
    const latency = latencyProfile(o.latency ?? process.env.CHAOS_LATENCY ?? 'realistic');
    slack.useLatency(latency);
    api.useLatency(latency);
    slack.seedLatency(o.seed);
    api.seedLatency(o.seed);
    const dir = mkdtempSync(join(tmpdir(), 'bot-chaos-'));
    const database = o.engine === 'postgres' ? await createTestDatabase() : undefined;
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
    const [apiLink, dbLink] = [links[0]?.proxy, links[1]?.proxy];
    const env: Record<string, string> = {
      SLACK_BOT_TOKEN: SECRETS.botToken,
      SLACK_SIGNING_SECRET: SECRETS.signingSecret,
      SLACK_API_URL: slack.url,
      MINTLIFY_API_KEY: SECRETS.apiKey,
      MINTLIFY_PROJECT_ID: PROJECT,
      MINTLIFY_API_URL: apiLink ? apiLink.rewrite(api.url) : api.url,
      DATABASE_URL:
        database && dbLink ? dbLink.rewrite(database.url) : `sqlite:${join(dir, 'bot.sqlite')}`,
      POLL_INTERVAL_MS: '100',
      POLL_MAX_INTERVAL_MS: '400',
      // Short, so that work a killed bot held is taken over soon; at realistic latency long
      // enough for a create (1 s ± 20 %) and a slow link inside its deadline (0.8 × lease).
      LEASE_MS: latency.name === 'zero' ? '2000' : '4000',
      SLACK_TIMEOUT_MS: '1000',
      // A black hole of a few seconds outlasts it: the bot's timeouts are part of the test.
      DATABASE_TIMEOUT_MS: '2000',
      LOG_LEVEL: 'debug',
      ...o.env,
    };
    const out = o.out ?? ((line: string) => process.stdout.write(`${line}\n`));
    const world = new ChaosWorld({
      engine: o.engine,
      rng: new Prng(o.seed),
      slack,
      api,
      env,
      database,
      dir,
      out,
      latency,
      links,
    });
    ChaosWorld.open.add(world);
    return world;
  }

  get seed(): number {
    return this.rng.seed;
  }

  /** Turns the weekly digest on (every second, so that it runs at once), in its own channel. */
  enableDigest(): void {
    this.digest = true;
    this.#env.DIGEST_CHANNEL = DIGEST_CHANNEL;
    this.#env.DIGEST_CRON = '* * * * * *';
  }

  // ---- bots ----------------------------------------------------------------------------------

  /**
   * Starts (or restarts) bot `name` on its own port and waits until it is healthy. When the
   * hour's agent budget is nearly spent, time is moved on an hour first (see clock-offset.ts),
   * so that long runs are not throttled by the budget they are not testing.
   *
   * On PostgreSQL the bots judge time on the database server's clock (src/clock.ts), which a
   * preload cannot move: there time moves on by moving every timestamp the database holds
   * back by as much, which is the same to the bots.
   */
  async startBot(name = 'a', o: { later?: boolean } = {}): Promise<BotProcess> {
    const old = this.bots.get(name);
    if (old?.alive) throw new Error(`bot ${name} is still running`);
    // Time moves on only while no other bot runs: the leases of a live bot would be aged
    // with the rest (PostgreSQL), or be judged by a clock an hour ahead of its own.
    const alone = ![...this.bots.values()].some((b) => b !== old && b.alive);
    const uses = this.agentUses();
    if (alone && uses - this.#usesAtOffset > AGENT_BUDGET - 30) {
      this.clockOffsetMs += HOUR_MS + 60_000;
      this.#usesAtOffset = uses;
    }
    if (alone && o.later) this.clockOffsetMs += LATER_MS;
    if (this.#database && this.clockOffsetMs > this.#agedMs) {
      await ageDatabase(this.#database.url, this.clockOffsetMs - this.#agedMs);
      this.#agedMs = this.clockOffsetMs;
    }
    let port = this.#ports.get(name);
    if (port === undefined) {
      port = await freePort();
      this.#ports.set(name, port);
    }
    const bot = new BotProcess({
      name,
      env: { ...this.#env, PORT: String(port) },
      clockOffsetMs: this.clockOffsetMs,
    });
    this.bots.set(name, bot);
    await bot.healthy();
    return bot;
  }

  liveBots(): BotProcess[] {
    return [...this.bots.values()].filter((b) => b.alive);
  }

  async kill9(name = 'a'): Promise<void> {
    const bot = this.bots.get(name);
    if (!bot) return;
    await bot.kill9();
    this.#dead.push(bot);
    this.stats.kills++;
  }

  /** Creates and messages that reached the service (what its budget counts). */
  agentUses(): number {
    return this.api.requests.filter(
      (r) => (r.kind === 'create' || r.kind === 'message') && r.status !== null && r.status < 500,
    ).length;
  }

  // ---- Slack's part ----------------------------------------------------------------------------

  #pickBot(via?: string): BotProcess | undefined {
    if (via) {
      const b = this.bots.get(via);
      return b?.alive ? b : undefined;
    }
    const live = this.liveBots();
    return live.length ? this.rng.pick(live) : undefined;
  }

  /**
   * A signed POST to a bot as Slack makes it, stamped with the bots' clock: whether it was
   * acked in time, and when an ack with text (which the person sees) came back.
   */
  async #post(
    bot: BotProcess,
    body: string,
    retryNum?: number,
  ): Promise<{ ok: boolean; textAt?: number }> {
    const ts = Math.floor((Date.now() + this.clockOffsetMs) / 1000);
    const headers: Record<string, string> = {
      'content-type': body.startsWith('{')
        ? 'application/json'
        : 'application/x-www-form-urlencoded',
      ...signSlackRequest(SECRETS.signingSecret, body, ts),
    };
    if (retryNum !== undefined) {
      headers['x-slack-retry-num'] = String(retryNum);
      headers['x-slack-retry-reason'] = 'http_error';
    }
    try {
      const res = await fetch(`${bot.url}/slack/events`, {
        method: 'POST',
        headers,
        body,
        signal: AbortSignal.timeout(SLACK_ACK_MS),
      });
      const answer = await res.text();
      return { ok: res.ok, ...(res.ok && answer.includes('"text"') ? { textAt: Date.now() } : {}) };
    } catch {
      return { ok: false };
    }
  }

  nextPrompt(): string {
    return `chaos ${this.seed} job ${++this.#seq}`;
  }

  /** `/agent <prompt>` as a person types it; to a given bot or one picked like a balancer. */
  async command(
    o: { prompt?: string; via?: string; channel?: string } = {},
  ): Promise<CommandRecord> {
    const prompt = o.prompt ?? this.nextPrompt();
    const channel = o.channel ?? CHANNEL;
    const bot = this.#pickBot(o.via);
    const responseUrl = this.slack.responseUrl();
    const rec: CommandRecord = {
      prompt,
      channel,
      via: bot?.name ?? '-',
      acked: false,
      at: Date.now(),
      responseId: responseUrl.split('/').at(-1) ?? '',
    };
    this.commands.push(rec);
    if (!bot) return rec; // Slack: "dispatch_failed"
    const fields = slashCommand({
      text: prompt,
      response_url: responseUrl,
      channel_id: channel,
      user_id: USER,
    });
    const acked = await this.#post(bot, formEncode(fields));
    rec.acked = acked.ok;
    rec.ackTextAt = acked.textAt;
    return rec;
  }

  /** A person replies in a thread: the message lands in Slack, then Slack delivers the event. */
  async reply(threadTs: string, o: { channel?: string; via?: string } = {}): Promise<ReplyRecord> {
    const channel = o.channel ?? CHANNEL;
    const text = `chaos ${this.seed} follow-up ${++this.#seq}`;
    const at = Date.now();
    const { ts } = this.slack.addUserMessage({ channel, user: USER, text, thread_ts: threadTs });
    const body = messageEvent({ text, channel, user: USER, ts, thread_ts: threadTs });
    const rec: ReplyRecord = { channel, threadTs, ts, text, body, attempts: 0, acked: false, at };
    this.replies.push(rec);
    await this.#deliver(rec, o.via);
    return rec;
  }

  async #deliver(rec: ReplyRecord, via?: string): Promise<void> {
    const bot = this.#pickBot(via);
    if (!bot) return; // nobody answers: counts as a failed attempt when Slack next tries
    rec.attempts++;
    const delivered = await this.#post(
      bot,
      JSON.stringify(rec.body),
      rec.attempts > 1 ? rec.attempts - 1 : undefined,
    );
    rec.acked = delivered.ok;
  }

  /** Slack's retries of events that were not acked, sent to whichever bot is up. */
  async redeliver(): Promise<void> {
    for (const r of this.replies) {
      if (r.acked || r.attempts > SLACK_EVENT_RETRIES) continue;
      if (r.attempts === 0) r.attempts = 1; // the first try hit a dead bot
      await this.#deliver(r);
    }
  }

  injectApi(kind: Parameters<ApiEmulator['inject']>[0], fault: ApiFault, times = 1): void {
    this.api.inject(kind, fault, times);
  }

  injectSlack(method: string, fault: SlackFault, times = 1): void {
    this.slack.failNext(method, fault, times);
    this.stats.slackFaults += times;
  }

  // ---- the agent's part ------------------------------------------------------------------------

  /** Roots the bot posted in a channel. */
  roots(channel = CHANNEL): StoredMessage[] {
    return this.slack.history(channel).filter((m) => m.user === 'UBOT' && !m.thread_ts);
  }

  /** Threads whose root shows a job id, with the emulator's job. */
  jobThreads(channel = CHANNEL): { root: StoredMessage; job: EmulatedJob }[] {
    const out: { root: StoredMessage; job: EmulatedJob }[] = [];
    for (const root of this.roots(channel)) {
      const id = jobIdOf(root);
      const job = id ? this.api.jobs.get(id) : undefined;
      if (job) out.push({ root, job });
    }
    return out;
  }

  /**
   * Whether the job may finish now. A real job does not finish within a poll of a follow-up;
   * finishing it before the bot saw it active again would only exercise the bot's grace
   * period (30 s), not a crash.
   */
  canFinish(job: EmulatedJob): boolean {
    if (job.status !== 'active') return false;
    const path = `/v2/agent/${PROJECT}/job/${job.id}`;
    const lastMessage = this.api.requests.findLast(
      (r) => r.kind === 'message' && r.path === `${path}/message` && r.status === 200,
    );
    if (!lastMessage) return true;
    return this.api.requests.some(
      (r) => r.kind === 'get' && r.path === path && r.at > (lastMessage.answeredAt ?? Infinity),
    );
  }

  /** Completes (with a fresh PR link) or fails a job; returns what it did. */
  finish(job: EmulatedJob, how: 'complete' | 'fail' | 'archive' = 'complete'): string {
    if (how === 'fail') this.api.fail(job.id);
    else if (how === 'archive') this.api.archive(job.id);
    else this.api.complete(job.id, `https://github.com/acme/docs/pull/${++this.#prSeq}`);
    return how;
  }

  /** Active jobs that may finish now. */
  finishable(): EmulatedJob[] {
    return [...this.api.jobs.values()].filter((j) => this.canFinish(j));
  }

  // ---- settling and checking -------------------------------------------------------------------

  /** What is still outstanding, from the fakes; empty when everything is done and said. */
  outstanding(): string[] {
    const left: string[] = [];
    for (const r of this.replies)
      if (!r.acked && r.attempts <= SLACK_EVENT_RETRIES) left.push(`event for reply ${r.ts}`);
    if (this.jobsMustFinish)
      for (const job of this.api.jobs.values())
        if (job.status === 'active') left.push(`job ${job.id} active`);
    for (const ch of this.channels()) {
      for (const root of this.roots(ch)) {
        if (root.text.startsWith('Starting')) left.push(`root ${root.ts} still "Starting"`);
        const id = jobIdOf(root);
        const job = id ? this.api.jobs.get(id) : undefined;
        if (job && job.status !== 'active' && !this.#finalAnnounced(ch, root.ts, job))
          left.push(`job ${job.id} ${job.status} not announced`);
      }
    }
    if (this.digest && this.digestPosts().length === 0) left.push('digest not posted');
    return left;
  }

  /**
   * Lets the bots finish everything: redelivers events, finishes jobs as they become
   * finishable, until nothing is outstanding (then waits a little more, in which a
   * duplicate would show up) or the time is up.
   */
  async settle(timeoutMs: number, stallMs = STALL_MS): Promise<string[]> {
    // Slack allows about one message a second per channel and each outstanding item may
    // need two (the root's update, the announcement): a backlog is given that much longer.
    const deadline = Date.now() + timeoutMs + this.outstanding().length * 2_000;
    let left: string[] = [];
    // What is stuck stays stuck: stop waiting once nothing has moved for a while.
    let last = '';
    let movedAt = Date.now();
    while (Date.now() < deadline && Date.now() - movedAt < stallMs) {
      await this.redeliver();
      if (this.jobsMustFinish)
        for (const job of this.finishable())
          this.finish(job, this.rng.chance(0.2) ? 'fail' : 'complete');
      left = this.outstanding();
      const now = `${left.join('|')}#${this.slack.calls.length}#${this.api.requests.length}`;
      if (now !== last) [last, movedAt] = [now, Date.now()];
      if (left.length === 0) {
        await sleep(1_000);
        left = this.outstanding();
        if (left.length === 0) return [];
      }
      await sleep(150);
    }
    const why =
      Date.now() >= deadline ? 'the time allowed passed' : `nothing moved for ${stallMs} ms`;
    this.out(
      `chaos: not settled (${why}); ${left.length} outstanding, e.g. ${left.slice(0, 3).join('; ')}`,
    );
    return left;
  }

  channels(): string[] {
    return [...new Set([CHANNEL, ...this.commands.map((c) => c.channel)])];
  }

  #announcements(channel: string, threadTs: string): StoredMessage[] {
    return this.slack
      .thread(channel, threadTs)
      .filter(
        (m) =>
          m.user === 'UBOT' && m.ts !== threadTs && m.metadata?.event_type === ANNOUNCEMENT_EVENT,
      );
  }

  /** The thread's latest status announcement (notices aside) is the job's final status. */
  #finalAnnounced(channel: string, threadTs: string, job: EmulatedJob): boolean {
    const last = this.#announcements(channel, threadTs)
      .filter((m) => !String(m.metadata?.event_payload.key ?? '').startsWith(REPLY_NOTICE_PREFIX))
      .filter((m) => m.metadata?.event_payload.kind !== 'notice')
      .at(-1);
    if (!last || last.metadata?.event_payload.kind !== job.status) return false;
    return job.status !== 'completed' || !job.prLink || last.text.includes(job.prLink);
  }

  digestPosts(): StoredMessage[] {
    return this.slack.history(DIGEST_CHANNEL).filter((m) => m.user === 'UBOT' && !m.thread_ts);
  }

  /** Every invariant, from the fakes' state. */
  check(): { violations: Violation[]; counts: Record<string, number> } {
    const v: Violation[] = [];
    const counts = { duplicates: 0, lost: 0, uncertainReported: 0, unanswered: 0, refused: 0 };
    const dup = (what: string) => {
      counts.duplicates++;
      v.push({ kind: 'duplicate', what });
    };
    const lost = (what: string) => {
      counts.lost++;
      v.push({ kind: 'lost', what });
    };
    const created = this.api.createdJobs();
    const byPrompt = new Map<string, EmulatedJob[]>();
    for (const j of created)
      byPrompt.set(j.messages[0] ?? '', [...(byPrompt.get(j.messages[0] ?? '') ?? []), j]);

    // Commands: one root each, one job at most, and the thread knows its job.
    for (const c of this.commands) {
      const roots = this.roots(c.channel).filter((m) => m.text.endsWith(`: ${c.prompt}`));
      const jobs = byPrompt.get(c.prompt) ?? [];
      if (roots.length > 1) dup(`/agent "${c.prompt}": ${roots.length} root messages`);
      if (jobs.length > 1)
        dup(`/agent "${c.prompt}": ${jobs.length} jobs created (a create was resent)`);
      const root = roots[0];
      if (!root) {
        if (jobs.length > 0)
          lost(`/agent "${c.prompt}": job ${jobs[0]?.id} created, but no thread in Slack`);
        else if (c.acked) counts.unanswered++;
        continue;
      }
      const shown = JSON.stringify(root.blocks ?? []);
      if (root.text.startsWith('Starting')) {
        const sent = jobs.length
          ? `job ${jobs[0]?.id} was created`
          : 'no create reached the service';
        lost(
          `/agent "${c.prompt}": root ${root.ts} still says "Starting" (${sent}; never settled)`,
        );
        continue;
      }
      const id = jobIdOf(root);
      const job = jobs[0];
      if (id && !this.api.jobs.has(id))
        lost(`/agent "${c.prompt}": root ${root.ts} shows unknown job ${id}`);
      if (job && !id) {
        if (/may have started|cannot tell whether it started/.test(shown))
          counts.uncertainReported++;
        else
          lost(
            `/agent "${c.prompt}": job ${job.id} created, but its thread ${root.ts} does not know it (${root.text.slice(0, 60)})`,
          );
      }
      if (!job && !id) counts.refused++;
    }

    // Jobs: every job created through the bot is in a thread; each final status announced once.
    const known = new Set(this.commands.map((c) => c.prompt));
    for (const j of created) {
      if (!known.has(j.messages[0] ?? ''))
        lost(`job ${j.id} was created for no /agent of this run`);
    }
    for (const ch of this.channels()) {
      for (const root of this.roots(ch)) {
        const keys = new Map<string, number>();
        for (const m of this.#announcements(ch, root.ts)) {
          const key = String(m.metadata?.event_payload.key);
          keys.set(key, (keys.get(key) ?? 0) + 1);
        }
        for (const [key, n] of keys)
          if (n > 1) dup(`thread ${root.ts}: announcement ${key} posted ${n} times`);
        const id = jobIdOf(root);
        const job = id ? this.api.jobs.get(id) : undefined;
        if (job && job.status !== 'active' && !this.#finalAnnounced(ch, root.ts, job)) {
          const said = this.#announcements(ch, root.ts).map((m) => m.metadata?.event_payload.key);
          lost(
            `job ${job.id} is ${job.status}${job.prLink ? ` (${job.prLink})` : ''} but thread ${root.ts} last says ${said.at(-1) ?? 'nothing'}`,
          );
        }
        if (job?.status === 'active' && this.jobsMustFinish) {
          const why = this.canFinish(job)
            ? 'still active at the end'
            : 'a follow-up reached it, and the bot never polled it again: the new round is not watched';
          lost(`job ${job.id} in thread ${root.ts} never finished (${why})`);
        }
      }
    }

    // Follow-ups: received by the service exactly once, or the thread says it may not have been.
    const received = new Map<string, number>();
    for (const j of created)
      for (const m of j.messages.slice(1)) received.set(m, (received.get(m) ?? 0) + 1);
    const unexplained = new Map<string, ReplyRecord[]>();
    for (const r of this.replies) {
      const n = received.get(r.text) ?? 0;
      if (n > 1) dup(`follow-up ${r.ts} ("${r.text}") reached the service ${n} times`);
      const noticed = this.#announcements(r.channel, r.threadTs).some((m) => {
        const key = String(m.metadata?.event_payload.key ?? '');
        return key.startsWith(REPLY_NOTICE_PREFIX) && key.includes(r.ts);
      });
      if (noticed) counts.uncertainReported++;
      if (n >= 1 || noticed) continue;
      if (!r.acked) {
        counts.unanswered++; // Slack gave up delivering it: the bot never had it
        continue;
      }
      unexplained.set(r.threadTs, [...(unexplained.get(r.threadTs) ?? []), r]);
    }
    // A reply the bot refused for a plain reason (job still starting, budget spent, rate
    // limited) was answered "I did not send it" to its author; Slack does not tie that answer
    // to the reply, so it is matched per thread by count.
    for (const [threadTs, list] of unexplained) {
      const told = this.slack.ephemerals.filter(
        (e) => e.thread_ts === threadTs && /did not send|not send your message/i.test(e.text ?? ''),
      ).length;
      counts.refused += Math.min(told, list.length);
      for (const r of list.slice(told)) {
        const maybe = this.slack.ephemerals.some(
          (e) =>
            e.thread_ts === threadTs &&
            /could not confirm|may have been delivered/i.test(e.text ?? ''),
        );
        lost(
          `follow-up ${r.ts} ("${r.text}") in thread ${threadTs} never reached the service and the thread does not say so` +
            (maybe ? ' (only an ephemeral "may have been delivered" was sent)' : ''),
        );
      }
    }

    // The digest: once per period.
    if (this.digest) {
      const posts = this.digestPosts();
      const texts = new Map<string, number>();
      for (const p of posts) texts.set(p.text, (texts.get(p.text) ?? 0) + 1);
      for (const [text, n] of texts)
        if (n > 1) dup(`digest "${text.slice(0, 60)}" posted ${n} times`);
      if (posts.length === 0) lost('the digest was never posted');
    }
    return { violations: v, counts };
  }

  /** Bot log tails, for a failure message. */
  logTails(): string {
    return [...this.#dead.slice(-2), ...this.liveBots()].map((b) => b.tailText()).join('\n');
  }

  summary(counts: Record<string, number>): string {
    const faults =
      this.api.requests.filter((r) => r.fault !== undefined).length +
      this.stats.slackFaults +
      this.stats.netFaults;
    const waits = answerWaits(this.slack, this.commands, this.replies);
    if (waits.worst) this.out(`chaos: longest wait for a first answer: ${waits.worst}`);
    const extra = Object.entries({
      ...this.extra,
      unanswered: counts.unanswered ?? 0,
      latency: this.latency.name,
      answered: `${waits.answered}/${waits.sent}`,
      maxAnswerWaitMs: waits.maxMs,
    })
      .map(([k, val]) => `${k}=${val}`)
      .join(' ');
    return (
      `chaos: engine=${this.engine} seed=${this.seed} iterations=${this.stats.iterations} ` +
      `kills=${this.stats.kills} faults=${faults} jobs=${this.api.createdJobs().length} ` +
      `followUps=${this.replies.length} duplicates=${counts.duplicates ?? 0} lost=${counts.lost ?? 0} ` +
      `uncertainReported=${counts.uncertainReported ?? 0} ${extra}`
    ).trim();
  }

  async close(): Promise<void> {
    ChaosWorld.open.delete(this);
    for (const b of this.liveBots()) await b.kill9();
    await this.slack.close();
    await this.api.close();
    for (const l of this.links) await l.proxy.close();
    rmSync(this.#dir, { recursive: true, force: true });
    await this.#database?.drop();
  }
}

/** The job id a root message shows ("Job `job_…`"), if any. */
export function jobIdOf(root: StoredMessage): string | undefined {
  return /Job `([^`]+)`/.exec(JSON.stringify(root.blocks ?? []))?.[1];
}

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Polls `check` every few ms until it holds or the time is up; false on time-out. */
export async function until(
  check: () => boolean,
  timeoutMs: number,
  everyMs = 3,
): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) return false;
    await sleep(everyMs);
  }
  return true;
}
