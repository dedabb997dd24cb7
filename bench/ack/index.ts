/**
 * Benchmark 1: how long Slack waits for the bot's ack of `/agent`, against a bare Bolt app
 * whose handler only acks, side by side in the same run, over HTTP and over Socket Mode.
 *
 * Three processes, as in a deployment: this one is Slack's side (the load generator, and the
 * Socket Mode server), a second serves the fake Slack Web API and the agent API emulator,
 * the third is the app under test: the bot as `npm start` runs it (real Bolt, real SQLite
 * file), or the bare Bolt app. The two apps take turns, in alternating order, so drift on a
 * shared machine falls on both. The fakes answer at the run's latency profile; at realistic
 * latency a Socket Mode envelope takes 50 ms to reach either app, included in its ack time.
 */
import { type ChildProcess, fork } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { BUSY_TEXT } from '../../src/slack/listeners/agent-command.ts';
import type { LatencyName } from '../../test/fakes/latency.ts';
import { FakeSocketMode } from '../../test/fakes/socket-mode.ts';
import { slashCommand } from '../../test/helpers/slack-requests.ts';
import {
  type BotProcess,
  botEnv,
  postCommand,
  startBotProcess,
  stopBotProcess,
} from '../bot-process.ts';
import {
  type BenchOptions,
  type BenchResult,
  benchBotEnv,
  botNodeFlags,
  log,
  type Metric,
  PROJECT,
  percentile,
  SECRETS,
} from '../measure.ts';

const CHANNELS = 20;
/** Acks that said the bot was too busy to take the command (its work queue was full). */
let busy = 0;
/** `BENCH_ACK_MODES=socket` runs one mode (when profiling with `BENCH_CPU_PROF=<dir>`). */
const MODES = (process.env.BENCH_ACK_MODES ?? 'http,socket')
  .split(',')
  .filter((m): m is Mode => m === 'http' || m === 'socket');
const here = (f: string) => fileURLToPath(new URL(f, import.meta.url));

type Target = 'bot' | 'bare';
type Mode = 'http' | 'socket';

interface Fakes {
  child: ChildProcess;
  slackUrl: string;
  apiUrl: string;
  responseUrls(n: number): Promise<string[]>;
}

function ask<T>(child: ChildProcess, message: unknown): Promise<T> {
  return new Promise((resolve) => {
    child.once('message', (m) => resolve(m as T));
    child.send(message as never);
  });
}

async function startFakes(socketUrls: string[], latency: LatencyName): Promise<Fakes> {
  const child = fork(here('./fakes-process.ts'), { stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
  const urls = await ask<{ slackUrl: string; apiUrl: string }>(child, {
    start: { apiKey: SECRETS.apiKey, projectId: PROJECT, socketUrls, latency },
  });
  return {
    child,
    ...urls,
    responseUrls: async (n) => (await ask<{ urls: string[] }>(child, { responseUrls: n })).urls,
  };
}

/** The app under test, started from the environment as a user would start it. */
async function startTarget(
  target: Target,
  mode: Mode,
  fakes: Fakes,
  dir: string,
): Promise<BotProcess> {
  const profile = process.env.BENCH_CPU_PROF && target === 'bot';
  return startBotProcess({
    name: target,
    env: (port) =>
      botEnv({
        slackUrl: fakes.slackUrl,
        apiUrl: fakes.apiUrl,
        port,
        databaseUrl: `sqlite:${join(dir, `bot-${port}.sqlite`)}`,
        socketMode: mode === 'socket',
        extra: benchBotEnv(),
      }),
    ...(target === 'bot' ? {} : { script: here('./bare-bolt.ts') }),
    ...(profile
      ? {
          execArgv: [
            ...botNodeFlags(),
            '--cpu-prof',
            `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`,
          ],
        }
      : {}),
  });
}

/** `n` commands, `concurrency` at a time; the latency of each, send to ack, in ms. */
async function drive(
  n: number,
  concurrency: number,
  send: (i: number) => Promise<void>,
): Promise<number[]> {
  const latencies: number[] = [];
  let next = 0;
  const worker = async () => {
    while (next < n) {
      const i = next++;
      const t0 = performance.now();
      await send(i);
      latencies.push(performance.now() - t0);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return latencies;
}

function commandFields(i: number, responseUrl: string): Record<string, string> {
  return slashCommand({
    text: `Document setting ${i} in the configuration reference`,
    response_url: responseUrl,
    channel_id: `C${String(1 + (i % CHANNELS)).padStart(4, '0')}`,
    user_id: `U${String(1 + (i % 7)).padStart(4, '0')}`,
  });
}

async function httpSender(port: number, urls: string[]): Promise<(i: number) => Promise<void>> {
  const url = `http://127.0.0.1:${port}/slack/events`;
  return async (i) => {
    const { status, text } = await postCommand(url, commandFields(i, urls[i]!));
    if (status !== 200) throw new Error(`ack answered ${status}`);
    if (text.includes(BUSY_TEXT)) busy++;
  };
}

function socketSender(socket: FakeSocketMode, urls: string[]): (i: number) => Promise<void> {
  return async (i) => {
    const ack = await socket.send('slash_commands', commandFields(i, urls[i]!), {
      timeoutMs: 10_000,
    });
    if (JSON.stringify(ack.payload ?? '').includes(BUSY_TEXT)) busy++;
  };
}

interface Pair {
  bot: number[];
  bare: number[];
  /** Of the bot's measured commands, how many were answered "busy". */
  busy: number;
}

async function runPair(
  mode: Mode,
  round: number,
  sizes: { n: number; warmup: number; concurrency: number },
  fakes: Fakes,
  socket: FakeSocketMode,
  dir: string,
): Promise<Pair> {
  const out: Partial<Pair> = {};
  const order: Target[] = round % 2 ? ['bare', 'bot'] : ['bot', 'bare'];
  for (const target of order) {
    const before = socket.openConnections();
    const app = await startTarget(target, mode, fakes, dir);
    try {
      if (mode === 'socket') {
        const deadline = Date.now() + 10_000;
        while (socket.openConnections() <= before) {
          if (Date.now() > deadline) throw new Error(`${target}: no Socket Mode connection`);
          await new Promise((r) => setTimeout(r, 10));
        }
      }
      const urls = await fakes.responseUrls(sizes.n + sizes.warmup);
      const send = mode === 'http' ? await httpSender(app.port, urls) : socketSender(socket, urls);
      await drive(sizes.warmup, sizes.concurrency, send);
      const offset = sizes.warmup;
      busy = 0;
      out[target] = await drive(sizes.n, sizes.concurrency, (i) => send(offset + i));
      if (target === 'bot') out.busy = busy;
    } finally {
      // Not measured: at realistic latency the bot would spend its shutdown bound finishing
      // the starts it queued, so it gets 3 s (a fresh database each start).
      await stopBotProcess(app.child, process.env.BENCH_CPU_PROF ? 20_000 : 3_000);
    }
  }
  return out as Pair;
}

export async function benchAck(o: BenchOptions): Promise<BenchResult> {
  const sizes = o.quick
    ? { n: 300, warmup: 30, concurrency: 20, rounds: 1 }
    : { n: 2_000, warmup: 100, concurrency: 20, rounds: 3 };
  const dir = mkdtempSync(join(tmpdir(), 'bench-ack-'));
  const socket = await FakeSocketMode.start();
  socket.useLatency(o.latency);
  const tickets = Array.from({ length: 8 * sizes.rounds + 8 }, () => socket.connectionUrl());
  const fakes = await startFakes(tickets, o.latency.name);
  const metrics: Metric[] = [];
  const notes: string[] = [];
  const started = performance.now();
  try {
    for (const mode of MODES) {
      const fig = {
        botP50: [],
        botP99: [],
        bareP50: [],
        bareP99: [],
        ratio: [],
        busy: [],
      } as Record<string, number[]>;
      for (let round = 0; round < sizes.rounds; round++) {
        const pair = await runPair(mode, round, sizes, fakes, socket, dir);
        const p = (xs: number[], q: number) => percentile(xs, q);
        fig.botP50!.push(p(pair.bot, 50));
        fig.botP99!.push(p(pair.bot, 99));
        fig.bareP50!.push(p(pair.bare, 50));
        fig.bareP99!.push(p(pair.bare, 99));
        fig.ratio!.push(p(pair.bot, 99) / p(pair.bare, 99));
        fig.busy!.push(pair.busy);
        log(
          `${mode} round ${round + 1}: bot p50 ${p(pair.bot, 50).toFixed(1)} p99 ${p(pair.bot, 99).toFixed(1)} ms, ` +
            `bare p50 ${p(pair.bare, 50).toFixed(1)} p99 ${p(pair.bare, 99).toFixed(1)} ms; bot answered busy ${pair.busy}×`,
        );
      }
      metrics.push(
        { name: `${mode} bot ack p50`, unit: 'ms', runs: fig.botP50! },
        { name: `${mode} bot ack p99`, unit: 'ms', runs: fig.botP99! },
        { name: `${mode} bare Bolt ack p50`, unit: 'ms', runs: fig.bareP50! },
        { name: `${mode} bare Bolt ack p99`, unit: 'ms', runs: fig.bareP99! },
        { name: `${mode} ratio p99 bot/bare`, unit: '×', runs: fig.ratio!, target: '≤ 1.5×' },
        { name: `${mode} answered "busy"`, unit: 'cmds', runs: fig.busy! },
      );
    }
    notes.push(
      `${sizes.n} /agent per app and round (+${sizes.warmup} warm-up), concurrency ${sizes.concurrency}, ` +
        `${CHANNELS} channels, ${sizes.rounds} round(s) per mode`,
      'apps alternate order each round; load generator, fakes and app in three processes',
      'the bot spends its 100 agent uses an hour in the first round: later /agent are refused by budget',
    );
  } finally {
    fakes.child.disconnect();
    await socket.close();
    rmSync(dir, { recursive: true, force: true });
  }
  const ms = performance.now() - started;
  return { name: 'ack', runsMs: [ms], peakRssMb: 0, peakHeapMb: 0, notes, stats: {}, metrics };
}
