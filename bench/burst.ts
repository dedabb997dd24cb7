/**
 * Benchmark of `/agent` in bursts, against the bot as `npm start` runs it (a child process,
 * HTTP mode, a fresh SQLite file per scenario) with FakeSlack and the API emulator in this
 * process, the load generator playing Slack (signed slash commands, each with a
 * response_url of its own):
 *
 * - a burst of 40 `/agent` over 4 channels, all sent at once: the time from sending each
 *   command to the first answer its sender can see (text in the ack, a response_url or
 *   ephemeral answer, or the root message of its job in the channel, whichever comes
 *   first); and `/agent status`, sent once the 40 are acked, to its answer;
 * - 200 `/agent` at once for the project's 100 agent-budget slots: for the commands whose
 *   job was never created (refused), how many public root messages were posted, and how
 *   long each person waited to be told (a private answer, or the root edited to say so).
 *
 * "Seen" is when FakeSlack received the call (it takes effect then; its latency delays only
 * the answer to the bot). It prints numbers; nothing here asserts a time.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ApiEmulator } from '../test/fakes/api-emulator.ts';
import type { LatencyProfile } from '../test/fakes/latency.ts';
import { FakeSlack } from '../test/fakes/slack.ts';
import { sleep } from '../test/helpers/net.ts';
import { slashCommand } from '../test/helpers/slack-requests.ts';
import {
  type BotProcess,
  botEnv,
  postCommand,
  startBotProcess,
  stopBotProcess,
} from './bot-process.ts';
import { type Cmd, Seen, TOKEN } from './burst-seen.ts';
import {
  type BenchOptions,
  type BenchResult,
  log,
  type Metric,
  PROJECT,
  percentile,
  SECRETS,
} from './measure.ts';

const CHANNELS = 4;
const BURST = 40;
const OVERBOOKED = 200;
/** The bot's agent budget (AGENT_USES_PER_HOUR) on a fresh database. */
const SLOTS = 100;
const WARM_UP = 2;
/**
 * How long the burst scenario waits for every answer, and the 200-command one for its 100
 * jobs to be created: far above what either takes today.
 */
const WAIT_MS = 120_000;
/**
 * How long after sending the 200 commands their refusals are waited for, and at least half
 * as long again once the 100 jobs are created. One not told by then counts as told when
 * the wait ended (a lower bound) and as not told. Far above the target: today a refusal
 * whose root was posted is told by the root's edit, queued behind every other root edit at
 * Slack's Tier 3 pace (about two minutes for 100), which neither run waits out.
 */
const TOLD_WAIT_MS = { quick: 10_000, full: 60_000 };
const TARGETS = { firstP50: 300, firstMax: 1_500, status: 300, told: 1_000 };

interface World {
  slack: FakeSlack;
  api: ApiEmulator;
  bot: BotProcess;
  seen: Seen;
}

async function startWorld(latency: LatencyProfile, dir: string, name: string): Promise<World> {
  const slack = await FakeSlack.start();
  const api = await ApiEmulator.start({ apiKey: SECRETS.apiKey, projectId: PROJECT });
  slack.useLatency(latency);
  api.useLatency(latency);
  try {
    const bot = await startBotProcess({
      env: (port) =>
        botEnv({
          slackUrl: slack.url,
          apiUrl: api.url,
          port,
          databaseUrl: `sqlite:${join(dir, `${name}.sqlite`)}`,
        }),
    });
    return { slack, api, bot, seen: new Seen(slack) };
  } catch (err) {
    await slack.close();
    await api.close();
    throw err;
  }
}

async function stopWorld(w: World): Promise<void> {
  try {
    await stopBotProcess(w.bot.child);
  } finally {
    await w.slack.close();
    await w.api.close();
  }
}

function command(w: World, token: string, channel: string, user: string, text: string): Cmd {
  const cmd: Cmd = { token, text, channel, user, responseId: `r-${token}`, sentAt: 0 };
  w.seen.expect(cmd);
  return cmd;
}

const jobCommand = (w: World, scenario: string, i: number) => {
  const token = `burst${scenario}${String(i).padStart(3, '0')}`;
  const channel = `C${scenario}${(i % CHANNELS) + 1}`;
  return command(w, token, channel, `U${token}`, `${token}: document setting ${i} in the FAQ`);
};

/** Sends as Slack does (signed, with the command's response_url); an ack with text counts. */
async function send(w: World, cmd: Cmd): Promise<void> {
  const fields = slashCommand({
    text: cmd.text,
    response_url: w.slack.responseUrl(cmd.responseId),
    channel_id: cmd.channel,
    user_id: cmd.user,
  });
  cmd.sentAt = Date.now();
  const { status, text } = await postCommand(w.bot.eventsUrl, fields);
  if (status !== 200) throw new Error(`${cmd.token}: the ack answered ${status}`);
  if (text.trim() !== '') w.seen.ack(cmd.token, Date.now());
}

/** Waits until `done` holds (reading new recordings every 20 ms) or `deadline` (epoch ms). */
async function until(w: World, done: () => boolean, deadline = Date.now() + WAIT_MS) {
  for (;;) {
    w.seen.update();
    if (done() || Date.now() > deadline) return;
    await sleep(20);
  }
}

interface BurstFigures {
  firstMs: number[];
  /** Commands whose sender saw nothing within WAIT_MS. */
  unseen: number;
  statusMs: number;
  /** How the first answers came: root posts and private answers. */
  byRoot: number;
}

async function burstScenario(w: World): Promise<BurstFigures> {
  // Warm-up: two jobs in a channel of their own, started and created before the burst.
  const warm = Array.from({ length: WARM_UP }, (_, i) => {
    const token = `burstW${String(i).padStart(3, '0')}`;
    return command(w, token, 'CW', `UW${i}`, `${token}: warm up`);
  });
  await Promise.all(warm.map((c) => send(w, c)));
  await until(w, () => w.api.createdJobs().length >= WARM_UP);

  const cmds = Array.from({ length: BURST }, (_, i) => jobCommand(w, 'A', i));
  const status = command(w, 'statusA', 'CA1', 'USTATUS', 'status');
  await Promise.all(cmds.map((c) => send(w, c)));
  await send(w, status); // the 40 are acked and being worked through
  const all = [...cmds, status];
  await until(w, () => all.every((c) => w.seen.first.has(c.token)));
  const firstMs = cmds
    .filter((c) => w.seen.first.has(c.token))
    .map((c) => w.seen.first.get(c.token)! - c.sentAt);
  const byRoot = cmds.filter((c) => w.seen.roots.get(c.token) === w.seen.first.get(c.token));
  const statusAt = w.seen.first.get(status.token);
  return {
    firstMs,
    unseen: BURST - firstMs.length,
    statusMs: statusAt === undefined ? Number.NaN : statusAt - status.sentAt,
    byRoot: byRoot.length,
  };
}

interface OverbookedFigures {
  created: number;
  refused: number;
  /** Public root messages posted for refused commands. */
  refusedRoots: number;
  toldMs: number[];
  neverTold: number;
}

async function overbookedScenario(w: World, toldWaitMs: number): Promise<OverbookedFigures> {
  const cmds = Array.from({ length: OVERBOOKED }, (_, i) => jobCommand(w, 'B', i));
  const created = () => {
    const prompts = w.api.createdJobs().map((j) => TOKEN.exec(j.messages[0] ?? '')?.[0]);
    return new Set(prompts.filter((t) => t !== undefined));
  };
  const sent = Date.now();
  await Promise.all(cmds.map((c) => send(w, c)));
  // Settled: each command has its job, or its sender was told it was refused (a root that
  // waits for its channel's turn is on its way: a job will come).
  const settled = () => {
    const jobs = created();
    return cmds.every(
      (c) => jobs.has(c.token) || w.seen.told.has(c.token) || w.seen.queued.has(c.token),
    );
  };
  // Which were refused is known once the budget's jobs exist; then their refusals.
  await until(w, () => created().size >= SLOTS || settled());
  await until(w, settled, Math.max(sent + toldWaitMs, Date.now() + toldWaitMs / 2));
  const endedAt = Date.now();
  const jobs = created();
  const coming = (c: Cmd) => jobs.has(c.token) || w.seen.queued.has(c.token);
  const refused = cmds.filter((c) => !coming(c));
  const told = refused.filter((c) => w.seen.told.has(c.token));
  return {
    created: jobs.size,
    refused: refused.length,
    refusedRoots: refused.filter((c) => w.seen.roots.has(c.token)).length,
    // Not told within the wait: counted as told when it ended, a lower bound.
    toldMs: refused.map((c) => (w.seen.told.get(c.token) ?? endedAt) - c.sentAt),
    neverTold: refused.length - told.length,
  };
}

async function oneRound(latency: LatencyProfile, dir: string, round: number, toldWaitMs: number) {
  const a = await startWorld(latency, dir, `burst-${round}`);
  let burst: BurstFigures;
  try {
    burst = await burstScenario(a);
  } finally {
    await stopWorld(a);
  }
  const b = await startWorld(latency, dir, `overbooked-${round}`);
  try {
    return { burst, overbooked: await overbookedScenario(b, toldWaitMs) };
  } finally {
    await stopWorld(b);
  }
}

export async function benchBurst(o: BenchOptions): Promise<BenchResult> {
  const rounds = o.quick ? 1 : 2;
  const waitMs = o.quick ? TOLD_WAIT_MS.quick : TOLD_WAIT_MS.full;
  const dir = mkdtempSync(join(tmpdir(), 'bench-burst-'));
  const fig: Record<string, number[]> = {};
  const add = (k: string, v: number) => {
    fig[k] = [...(fig[k] ?? []), v];
  };
  const runsMs: number[] = [];
  try {
    for (let round = 0; round < rounds; round++) {
      const started = performance.now();
      const { burst: b, overbooked: ob } = await oneRound(o.latency, dir, round, waitMs);
      runsMs.push(performance.now() - started);
      const p50 = percentile(b.firstMs, 50);
      const max = Math.max(...b.firstMs);
      const toldP50 = percentile(ob.toldMs, 50);
      const toldMax = ob.toldMs.length ? Math.max(...ob.toldMs) : Number.NaN;
      add('p50', p50);
      add('max', max);
      add('status', b.statusMs);
      add('unseen', b.unseen);
      add('byRoot', b.byRoot);
      add('refused', ob.refused);
      add('refusedRoots', ob.refusedRoots);
      add('toldP50', toldP50);
      add('toldMax', toldMax);
      add('neverTold', ob.neverTold);
      log(
        `burst ${o.latency.name} round ${round + 1}/${rounds}: 40 /agent first answer p50 ${p50.toFixed(0)} ms, ` +
          `max ${max.toFixed(0)} ms (${b.byRoot} first seen as the root post, ${b.unseen} unseen); ` +
          `status ${b.statusMs.toFixed(0)} ms; 200 for ${SLOTS} slots: ${ob.created} created, ` +
          `${ob.refused} refused, ${ob.refusedRoots} of them with a public root, told p50 ` +
          `${toldP50.toFixed(0)} / max ${toldMax.toFixed(0)} ms, ${ob.neverTold} never told`,
      );
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const m = (key: string, name: string, unit: string, target?: string): Metric => ({
    name,
    unit,
    runs: fig[key] ?? [],
    ...(target ? { target } : {}),
  });
  return {
    name: 'burst',
    runsMs,
    peakRssMb: 0,
    peakHeapMb: 0,
    notes: [
      `${BURST} /agent at once over ${CHANNELS} channels (after ${WARM_UP} warm-up jobs), then /agent status; ` +
        `then, on a fresh bot, ${OVERBOOKED} /agent at once for its ${SLOTS} budget slots`,
      'the bot as `npm start` runs it (child process, HTTP, fresh SQLite file per scenario); fakes and sender in this process',
      'answer seen: text in the ack, a response_url / ephemeral answer, or the root post',
      'refused: no job created and no note that its root waits for the channel by the end of the wait; told: privately, or by the root edited to say the budget is spent',
      `refusals waited for ${waitMs / 1000} s from the send, and ${waitMs / 2000} s more once the ${SLOTS} jobs exist; ` +
        'one not told by then counts as told when the wait ended (a lower bound)',
      `${rounds} round(s); wall time: both scenarios, bot starts and stops included`,
    ],
    stats: {},
    metrics: [
      m('p50', '40 /agent: first answer p50', 'ms', `≤ ${TARGETS.firstP50} ms`),
      m('max', '40 /agent: first answer max', 'ms', `≤ ${TARGETS.firstMax} ms`),
      m('byRoot', '40 /agent: first seen as the root post', 'cmds'),
      m('unseen', `40 /agent: nothing seen in ${WAIT_MS / 1000} s`, 'cmds', '0'),
      m('status', '/agent status during the burst', 'ms', `≤ ${TARGETS.status} ms`),
      m('refused', `${OVERBOOKED} for ${SLOTS} slots: refused`, 'cmds', `${OVERBOOKED - SLOTS}`),
      m('refusedRoots', 'refused: public root posts', 'roots', '0'),
      m('toldP50', 'refused: told p50', 'ms', `≤ ${TARGETS.told} ms`),
      m('toldMax', 'refused: told max', 'ms', `≤ ${TARGETS.told} ms`),
      m('neverTold', 'refused: not told by the end of the wait', 'cmds', '0'),
    ],
  };
}
