/**
 * Benchmark of a thread reply becoming a follow-up: the time from Slack sending the `message`
 * event (a signed event_callback over HTTP, or an envelope over Socket Mode) to the
 * `POST …/job/{id}/message` reaching the API emulator. The real bot (config → startBot) on a
 * fresh SQLite file per run, with FakeSlack and the emulator in this process, answering at
 * the run's latency profile (at realistic latency a follow-up POST takes 1 s to answer, so
 * replies queue behind each other). It prints numbers; nothing here asserts a time.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { type Bot, startBot } from '../src/app/bot.ts';
import { AGENT_USES_PER_HOUR } from '../src/app/budgets.ts';
import { loadConfig } from '../src/config/config.ts';
import { openStore } from '../src/store/open.ts';
import type { Store } from '../src/store/types.ts';
import { ApiEmulator } from '../test/fakes/api-emulator.ts';
import type { LatencyProfile } from '../test/fakes/latency.ts';
import { FakeSlack, SLACK_IDS } from '../test/fakes/slack.ts';
import { FakeSocketMode } from '../test/fakes/socket-mode.ts';
import { eventually, freePort } from '../test/helpers/net.ts';
import {
  formEncode,
  messageEvent,
  postSigned,
  slashCommand,
} from '../test/helpers/slack-requests.ts';
import {
  type BenchOptions,
  type BenchResult,
  log,
  type Metric,
  median,
  PROJECT,
  percentile,
  SECRETS,
  startMemoryProbe,
} from './measure.ts';

const CHANNEL = 'C0001';
const USER = 'U0001';
const TARGET_P99_MS = 50;
/** Far above what a run takes, also at realistic latency (a follow-up POST takes 1 s there). */
const WAIT_MS = 120_000;

type Mode = 'http' | 'socket';

interface Shape {
  runs: number;
  /** Jobs started per run; the replies go to their threads in turn. */
  jobs: number;
  /** Unmeasured replies sent one at a time first, so that a run does not time a cold path. */
  warmup: number;
  /** Measured replies per run, one every `gapMs`. */
  replies: number;
  gapMs: number;
}

const FULL: Shape = { runs: 5, jobs: 3, warmup: 5, replies: 90, gapMs: 50 };
const QUICK: Shape = { runs: 2, jobs: 2, warmup: 3, replies: 25, gapMs: 50 };

type Deliver = (
  kind: 'event' | 'command',
  payload: Record<string, unknown> | Record<string, string>,
) => Promise<void>;

/** The bot, the fakes around it and a way to send what Slack sends, in one mode. */
interface Rig {
  bot: Bot;
  store: Store;
  slack: FakeSlack;
  api: ApiEmulator;
  socket: FakeSocketMode | undefined;
  /** warn and error lines the bot logged (info and below are formatted, then dropped). */
  problems: string[];
  /** Delivers an Events API or slash-command payload; resolves on Slack's side of the ack. */
  deliver: Deliver;
}

/**
 * Production settings (polling, lease, pacing, retries, log level info) except where the
 * fakes are; the log lines are formatted as in production and then dropped.
 */
async function startRig(mode: Mode, dir: string, latency: LatencyProfile): Promise<Rig> {
  const socket = mode === 'socket' ? await FakeSocketMode.start() : undefined;
  const slack = await FakeSlack.start(socket ? { socketMode: socket } : {});
  const api = await ApiEmulator.start({ apiKey: SECRETS.apiKey, projectId: PROJECT });
  socket?.useLatency(latency);
  slack.useLatency(latency);
  api.useLatency(latency);
  const port = await freePort();
  const problems: string[] = [];
  let store: Store | undefined;
  let bot: Bot | undefined;
  try {
    const config = loadConfig({
      SLACK_BOT_TOKEN: SECRETS.botToken,
      SLACK_SIGNING_SECRET: SECRETS.signingSecret,
      SLACK_API_URL: slack.url,
      PORT: String(port),
      MINTLIFY_API_KEY: SECRETS.apiKey,
      MINTLIFY_PROJECT_ID: PROJECT,
      MINTLIFY_API_URL: api.url,
      DATABASE_URL: `sqlite:${join(dir, 'bot.sqlite')}`,
      ...(mode === 'socket' ? { SLACK_APP_TOKEN: SECRETS.appToken } : {}),
    });
    if (!config.ok) throw new Error(config.problems.join('\n'));
    bot = await startBot(config.config, {
      logDestination: {
        write: (line: string) => {
          if (/"level":(40|50|60)/.test(line)) problems.push(line);
        },
      },
      openStore: async (url, l) => {
        store = await openStore(url, l);
        return store;
      },
    });
    if (socket) await socket.waitForConnection();
    const deliver = deliverer(socket, `http://127.0.0.1:${port}/slack/events`);
    return { bot, store: store!, slack, api, socket, problems, deliver };
  } catch (err) {
    await closeRig({ bot, slack, api, socket });
    throw err;
  }
}

/** As Slack sends: an envelope over the socket, or a signed POST to the events URL. */
function deliverer(socket: FakeSocketMode | undefined, eventsUrl: string): Deliver {
  return async (kind, payload) => {
    if (socket) {
      await socket.send(kind === 'event' ? 'events_api' : 'slash_commands', payload);
      return;
    }
    const body =
      kind === 'event' ? JSON.stringify(payload) : formEncode(payload as Record<string, string>);
    const res = await postSigned(eventsUrl, SECRETS.signingSecret, { body });
    if (res.status !== 200) throw new Error(`${kind} answered ${res.status}: ${res.text}`);
  };
}

async function closeRig(rig: Pick<Rig, 'slack' | 'api' | 'socket'> & { bot?: Bot }) {
  try {
    await rig.bot?.stop();
  } finally {
    await rig.slack.close();
    await rig.api.close();
    await rig.socket?.close();
  }
}

/** Runs `/agent` `n` times and waits until each thread has its job: the root ts of each. */
async function startJobs(rig: Rig, n: number): Promise<string[]> {
  for (let i = 0; i < n; i++) {
    const fields = slashCommand({
      text: `Benchmark job ${i + 1}`,
      response_url: rig.slack.responseUrl(),
      channel_id: CHANNEL,
      user_id: USER,
    });
    await rig.deliver('command', fields);
  }
  const roots = () =>
    rig.slack.history(CHANNEL).filter((m) => m.user === SLACK_IDS.botUser && !m.thread_ts);
  await eventually(() => roots().length >= n, `${n} root messages`, WAIT_MS);
  const rootTs = roots().map((m) => m.ts);
  for (const ts of rootTs) {
    await eventually(
      // `|| false`: jobId is null until the create answers, and `eventually` takes null as done.
      async () => (await rig.store.findThread(SLACK_IDS.team, CHANNEL, ts))?.jobId || false,
      `the job of thread ${ts}`,
      WAIT_MS,
    );
  }
  return rootTs;
}

/** A person replies in a thread: the message lands in Slack, and the event is built for it. */
function reply(rig: Rig, threadTs: string, text: string): Record<string, unknown> {
  const { ts } = rig.slack.addUserMessage({
    channel: CHANNEL,
    user: USER,
    text,
    thread_ts: threadTs,
  });
  return messageEvent({ text, channel: CHANNEL, user: USER, ts, thread_ts: threadTs });
}

interface RunResult {
  /** Event sent → follow-up POST recorded by the emulator, in send order. */
  latencyMs: number[];
  /** Event sent → Slack's side of the ack (HTTP response, or the envelope's ack). */
  ackMs: number[];
  wallMs: number;
  rssMb: number;
  heapMb: number;
  /** Longest stall of this process's event loop (bot, fakes and sender) while measuring. */
  loopDelayMaxMs: number;
  gcMs: number;
  problems: number;
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, Math.max(0, ms)));

async function oneRun(
  mode: Mode,
  shape: Shape,
  run: number,
  latency: LatencyProfile,
): Promise<RunResult> {
  if (shape.jobs + shape.warmup + shape.replies > AGENT_USES_PER_HOUR)
    throw new Error(`a run needs more than the bot's ${AGENT_USES_PER_HOUR} agent uses an hour`);
  const dir = mkdtempSync(join(tmpdir(), 'bench-followup-'));
  try {
    const rig = await startRig(mode, dir, latency);
    try {
      const threads = await startJobs(rig, shape.jobs);
      return await sendReplies(rig, threads, shape, run);
    } finally {
      await closeRig(rig);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** When each reply was sent and when its follow-up reached the emulator (this clock). */
function trackFollowUps(api: ApiEmulator) {
  const sentAt = new Map<string, number>();
  const arrivedAt = new Map<string, number>();
  let strays = 0;
  const stop = api.onRequest((rec) => {
    if (rec.kind !== 'message') return;
    const at = performance.now();
    const prompt = (rec.body as { prompt?: string } | undefined)?.prompt ?? '';
    if (arrivedAt.has(prompt) || !sentAt.has(prompt)) strays++;
    else arrivedAt.set(prompt, at);
  });
  return {
    sent: (text: string, at: number) => void sentAt.set(text, at),
    arrived: (text: string) => arrivedAt.has(text),
    latencyMs: (text: string) => arrivedAt.get(text)! - sentAt.get(text)!,
    lastArrival: () => Math.max(...arrivedAt.values()),
    /** Follow-ups that arrived twice, or that no reply asked for. */
    strays: () => strays,
    stop,
  };
}

/** Warm-up replies one at a time, then the measured ones at a steady pace, not waiting on each. */
async function sendReplies(
  rig: Rig,
  threads: string[],
  shape: Shape,
  run: number,
): Promise<RunResult> {
  const followUps = trackFollowUps(rig.api);
  const thread = (i: number) => threads[i % threads.length]!;
  try {
    for (let i = 0; i < shape.warmup; i++) {
      const text = `warm-up ${run}.${i}`;
      followUps.sent(text, performance.now());
      await rig.deliver('event', reply(rig, thread(i), text));
      await eventually(() => followUps.arrived(text), `warm-up reply ${i}`, WAIT_MS);
    }
    const texts: string[] = [];
    const ackMs: number[] = [];
    const acks: Promise<void>[] = [];
    const probe = startMemoryProbe();
    const loop = monitorEventLoopDelay({ resolution: 5 });
    loop.enable();
    const started = performance.now();
    for (let i = 0; i < shape.replies; i++) {
      await sleep(started + i * shape.gapMs - performance.now());
      const text = `reply ${run}.${i}: also cover the edge cases`;
      const body = reply(rig, thread(i), text);
      texts.push(text);
      const t0 = performance.now();
      followUps.sent(text, t0);
      acks.push(rig.deliver('event', body).then(() => void ackMs.push(performance.now() - t0)));
    }
    await Promise.all(acks);
    await eventually(
      () => texts.every(followUps.arrived),
      `${shape.replies} follow-ups at the emulator`,
      WAIT_MS,
    );
    const mem = probe.stop();
    loop.disable();
    if (followUps.strays() > 0)
      throw new Error(`${followUps.strays()} follow-ups arrived twice or unasked`);
    return {
      latencyMs: texts.map(followUps.latencyMs),
      ackMs,
      wallMs: followUps.lastArrival() - started,
      rssMb: mem.rss,
      heapMb: mem.heap,
      loopDelayMaxMs: loop.max / 1e6,
      gcMs: mem.gcMs,
      problems: rig.problems.length,
    };
  } finally {
    followUps.stop();
  }
}

export async function benchFollowUp(o: BenchOptions): Promise<BenchResult> {
  const shape = o.quick ? QUICK : FULL;
  const modes: Mode[] = ['http', 'socket'];
  const results: Record<Mode, RunResult[]> = { http: [], socket: [] };
  // Interleaved, so that a drift of the machine over the benchmark touches both modes alike.
  for (let run = 0; run < shape.runs; run++) {
    for (const mode of modes) {
      const r = await oneRun(mode, shape, run, o.latency);
      results[mode].push(r);
      log(
        `followup ${mode} run ${run + 1}/${shape.runs}: p50 ${percentile(r.latencyMs, 50).toFixed(1)} ms, ` +
          `p99 ${percentile(r.latencyMs, 99).toFixed(1)} ms, max ${Math.max(...r.latencyMs).toFixed(1)} ms, ` +
          `ack p50 ${percentile(r.ackMs, 50).toFixed(1)} ms; event loop stalled ≤ ${r.loopDelayMaxMs.toFixed(1)} ms, ` +
          `GC ${r.gcMs.toFixed(0)} ms; ${r.problems} warn/error log lines`,
      );
    }
  }
  return summarize(results, shape);
}

function summarize(results: Record<Mode, RunResult[]>, shape: Shape): BenchResult {
  const modes = Object.keys(results) as Mode[];
  const metrics: Metric[] = [];
  const notes: string[] = [];
  const stats: Record<string, number> = {};
  for (const mode of modes) {
    const rs = results[mode];
    const p = (q: number) => rs.map((r) => percentile(r.latencyMs, q));
    metrics.push(
      { name: `${mode} reply→POST p50`, unit: 'ms', runs: p(50) },
      { name: `${mode} reply→POST p99`, unit: 'ms', runs: p(99), target: `< ${TARGET_P99_MS} ms` },
      { name: `${mode} ack p50`, unit: 'ms', runs: rs.map((r) => percentile(r.ackMs, 50)) },
      { name: `${mode} event-loop stall max`, unit: 'ms', runs: rs.map((r) => r.loopDelayMaxMs) },
    );
    const all = rs.flatMap((r) => r.latencyMs);
    notes.push(
      `${mode}: all ${all.length} replies pooled: p50 ${percentile(all, 50).toFixed(1)} ms, ` +
        `p99 ${percentile(all, 99).toFixed(1)} ms, max ${Math.max(...all).toFixed(1)} ms; ` +
        `warn/error log lines ${rs.reduce((n, r) => n + r.problems, 0)}`,
    );
    stats[`${mode}.p50`] = median(p(50));
    stats[`${mode}.p99`] = median(p(99));
  }
  const all = [...results.http, ...results.socket];
  notes.push(
    `per run: ${shape.jobs} jobs, ${shape.warmup} warm-up + ${shape.replies} measured replies, ` +
      `one every ${shape.gapMs} ms; fresh bot + SQLite file per run, production settings`,
    `the bot's own budget (${AGENT_USES_PER_HOUR} agent uses an hour, in its database) bounds a run; ` +
      `the emulator has none; a run's p99 (nearest rank of ${shape.replies}) is its largest`,
    'bot, fakes and sender share this process and its event loop; ' +
      'the ms columns above: first reply sent → last follow-up in, set by the pace',
  );
  return {
    name: 'followup',
    runsMs: all.map((r) => r.wallMs),
    peakRssMb: Math.max(...all.map((r) => r.rssMb)),
    peakHeapMb: Math.max(...all.map((r) => r.heapMb)),
    notes,
    stats,
    metrics,
  };
}
