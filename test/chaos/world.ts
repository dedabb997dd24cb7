import { rmSync } from 'node:fs';
import type { ApiEmulator, Fault as ApiFault, EmulatedJob } from '../fakes/api-emulator.ts';
import type { LatencyProfile } from '../fakes/latency.ts';
import type { FakeSlack, Fault as SlackFault, StoredMessage } from '../fakes/slack.ts';
import { CHANNEL, PROJECT } from '../helpers/harness.ts';
import { freePort, sleep } from '../helpers/net.ts';
import type { TestDatabase } from '../helpers/postgres.ts';
import { ageDatabase } from './age-database.ts';
import { BotProcess } from './bot-process.ts';
import {
  type Counts,
  check,
  DIGEST_CHANNEL,
  digestPosts,
  jobIdOf,
  type Observed,
  outstanding,
  summary,
  type Violation,
} from './checks.ts';
import type { Prng } from './prng.ts';
import { type CommandRecord, type ReplyRecord, SlackSide } from './slack-side.ts';
import {
  type Engine,
  type Link,
  startWorldParts,
  type WorldOptions,
  type WorldParts,
} from './world-setup.ts';

/** "Later": far enough that interrupted starts (5 min) and digest claims (15 min) are stale. */
const LATER_MS = 16 * 60_000;
const HOUR_MS = 3_600_000;
/** Agent uses (creates + messages) per project per hour, the service's documented budget. */
const AGENT_BUDGET = 100;
/**
 * Settling gives up when nothing at all happened in Slack or at the service for this long.
 * Scenarios with more than a batch (20) of pending posts pass a longer one: the notifier
 * sleeps 30 s before the next batch (a finding of this suite, see the report).
 */
const STALL_MS = 12_000;

/**
 * One chaos world: a fake Slack and the API emulator in this process, a database (a SQLite
 * file or a fresh PostgreSQL database), and the bots as child processes on it. It plays
 * Slack's part faithfully (slack-side.ts), drives the jobs through the emulator, and checks
 * the invariants from the fakes' state (checks.ts): what people would see in Slack and what
 * the service received, never the bot's own account of it. What it starts from:
 * world-setup.ts.
 */
export class ChaosWorld implements Observed {
  /** Worlds not closed yet: an interrupted `npm run chaos` closes them (bots, database). */
  static readonly open = new Set<ChaosWorld>();
  readonly engine: Engine;
  readonly rng: Prng;
  readonly slack: FakeSlack;
  readonly api: ApiEmulator;
  readonly bots = new Map<string, BotProcess>();
  readonly stats = { iterations: 0, kills: 0, sigterms: 0, slackFaults: 0, netFaults: 0 };
  readonly extra: Record<string, number | string> = {};
  readonly out: (line: string) => void;
  readonly latency: LatencyProfile;
  readonly links: Link[];
  /** How far ahead of the real clock the bots run (only ever grows, like time). */
  clockOffsetMs = 0;
  /** How far the PostgreSQL database's timestamps were moved back so far (see startBot). */
  #agedMs = 0;
  digest = false;
  /** Whether every job must be finished and announced at the end (not in the budget run). */
  jobsMustFinish = true;
  readonly #people: SlackSide;
  #env: Record<string, string>;
  #ports = new Map<string, number>();
  #database: TestDatabase | undefined;
  #dir: string;
  #prSeq = 0;
  #usesAtOffset = 0;
  #dead: BotProcess[] = [];

  private constructor(o: WorldParts) {
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
    this.#people = new SlackSide({
      slack: o.slack,
      rng: o.rng,
      bots: this.bots,
      clockOffsetMs: () => this.clockOffsetMs,
    });
  }

  static async create(o: WorldOptions): Promise<ChaosWorld> {
    const world = new ChaosWorld(await startWorldParts(o));
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

  // ---- Slack's part (slack-side.ts) ------------------------------------------------------------

  get commands(): CommandRecord[] {
    return this.#people.commands;
  }

  get replies(): ReplyRecord[] {
    return this.#people.replies;
  }

  /** `/agent <prompt>` as a person types it; to a given bot or one picked like a balancer. */
  command(o: { prompt?: string; via?: string; channel?: string } = {}): Promise<CommandRecord> {
    return this.#people.command(o);
  }

  /** A person replies in a thread: the message lands in Slack, then Slack delivers the event. */
  reply(threadTs: string, o: { channel?: string; via?: string } = {}): Promise<ReplyRecord> {
    return this.#people.reply(threadTs, o);
  }

  /** Slack's retries of events that were not acked, sent to whichever bot is up. */
  redeliver(): Promise<void> {
    return this.#people.redeliver();
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

  // ---- settling and checking (checks.ts) -------------------------------------------------------

  /** What is still outstanding, from the fakes; empty when everything is done and said. */
  outstanding(): string[] {
    return outstanding(this);
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

  digestPosts(): StoredMessage[] {
    return digestPosts(this.slack);
  }

  /** Every invariant, from the fakes' state. */
  check(): { violations: Violation[]; counts: Counts } {
    return check(this);
  }

  summary(counts: Partial<Counts>): string {
    return summary(this, counts);
  }

  /** Bot log tails, for a failure message. */
  logTails(): string {
    return [...this.#dead.slice(-2), ...this.liveBots()].map((b) => b.tailText()).join('\n');
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
