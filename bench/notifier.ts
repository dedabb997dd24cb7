/**
 * Benchmark 4: a burst of finished jobs through the notifier. 200 jobs finish at once over
 * 50 channels (4 each) and are recorded into the outbox as the poller records them; the real
 * notifier takes them through the real chat adapter and a WebClient set up as the bot's to
 * FakeSlack enforcing Slack's limits, on a real store. Measured per run: when the last
 * announcement lands against the floor Slack's per-channel pace allows, the spread of the
 * delays, the 429s received, when every root edit is shown, and, side by side in the same
 * run, how long a lone channel's announcement and a refused `/agent`'s root edit take while
 * the backlog is being worked and alone. At realistic latency every Slack call answers in
 * 100 ms ± 20 % from the burst on (the set-up's posts are not slowed). It prints numbers;
 * nothing here asserts a time.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LogLevel, WebClient } from '@slack/web-api';
import { startNotifier } from '../src/jobs/notifier.ts';
import type { JobChat } from '../src/jobs/ports.ts';
import { webClientOptions } from '../src/slack/app.ts';
import { createSlackJobChat } from '../src/slack/chat.ts';
import { oneClient } from '../src/slack/workspace-clients.ts';
import { openPostgresStore } from '../src/store/postgres.ts';
import { openSqliteStore } from '../src/store/sqlite.ts';
import type { JobThread, PollRecord, Store } from '../src/store/types.ts';
import type { LatencyProfile } from '../test/fakes/latency.ts';
import { FakeSlack, type RateLimits, SLACK_RATE_LIMITS } from '../test/fakes/slack.ts';
import { createTestDatabase, postgresAvailable } from '../test/helpers/postgres.ts';
import {
  type BenchOptions,
  type BenchResult,
  log,
  type Metric,
  median,
  percentile,
  silentLogger,
  startMemoryProbe,
} from './measure.ts';

const CHANNELS = 50;
const PER_CHANNEL = 4;
const JOBS = CHANNELS * PER_CHANNEL;
/** Slack's pace of one post a second per channel: 4 posts in one channel span 3 s at least. */
const POST_FLOOR_MS = (PER_CHANNEL - 1) * 1_000;
/**
 * At Slack's real Tier 3 (50 a minute) the 200 root edits take about four minutes a run, so
 * the bench runs the updates' budget this much faster on both sides (Slack's and the
 * notifier's) and states the floor at both rates. Posts run at Slack's real pace.
 */
const TIER3_SCALE = 30;
const SLACK_LIMITS: RateLimits = {
  postMessage: SLACK_RATE_LIMITS.postMessage,
  update: {
    perMinute: SLACK_RATE_LIMITS.update.perMinute * TIER3_SCALE,
    burst: SLACK_RATE_LIMITS.update.burst,
  },
};
/** What Slack lets through: its burst at once, then its rate. */
const updateFloorMs = (perMinute: number) =>
  ((JOBS - SLACK_RATE_LIMITS.update.burst) / perMinute) * 60_000;
/** The notifier keeps under Slack's budget: the same rate, a smaller burst. */
const NOTIFIER_UPDATES = { perMinute: SLACK_LIMITS.update.perMinute, burst: 5 };
/** When the lone channel's job finishes, counted from the burst. */
const LONE_AFTER_MS = 500;
const RUN_DEADLINE_MS = 120_000;
const TOKEN = 'xoxb-bench-token-0000000001';
const REFUSAL = "This project's agent budget (100 jobs and messages per hour) is spent.";

interface Threads {
  burst: JobThread[];
  /** Each a thread of its own channel: finishing (or refused) during the burst, then alone. */
  lone: JobThread;
  refused: JobThread;
  loneAlone: JobThread;
  refusedAlone: JobThread;
}

interface RunFigures {
  lastAnnouncementMs: number;
  p50Ms: number;
  p99Ms: number;
  rootsShownMs: number;
  posts429: number;
  updates429: number;
  loneMs: number;
  loneAloneMs: number;
  refusedMs: number;
  refusedAloneMs: number;
  wallMs: number;
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** The same order of finishing every run: jobs finish in no particular order. */
function shuffled(n: number, seed: number): number[] {
  const xs = Array.from({ length: n }, (_, i) => i);
  let s = seed;
  const rand = () => {
    s = (s * 1_103_515_245 + 12_345) % 2 ** 31;
    return s / 2 ** 31;
  };
  for (let i = n - 1; i > 0; i--) {
    const j = Math.floor(rand() * (i + 1));
    [xs[i], xs[j]] = [xs[j]!, xs[i]!];
  }
  return xs;
}

const snapshot = (t: JobThread, status: 'active' | 'completed') => ({
  jobId: t.jobId ?? `job_${t.id}`,
  status,
  model: 'claude',
  repository: 'https://github.com/acme/docs',
  ref: 'main',
  prLink: status === 'completed' ? `https://github.com/acme/docs/pull/${t.id}` : null,
});

/** What the poller records when it sees a job completed. */
function completion(t: JobThread): PollRecord {
  const snap = snapshot(t, 'completed');
  return {
    threadId: t.id,
    round: 0,
    snapshot: snap,
    schedule: { nextPollAt: null, pollIntervalMs: 5_000 },
    announcements: [{ key: `${snap.jobId}:0:completed`, kind: 'completed', prLink: snap.prLink }],
    now: Date.now(),
  };
}

/** Root messages posted and recorded, running jobs shown as running; refused ones still starting. */
async function setUp(store: Store, chat: JobChat): Promise<Threads> {
  let n = 0;
  const thread = async (channelId: string, running: boolean) => {
    const i = n++;
    const prompt = `Document feature ${i}`;
    const ws = { teamId: 'T1' };
    const { ts } = await chat.postRoot(ws, { channelId, userId: 'U1', prompt, marker: `m${i}` });
    const t = await store.createThread(
      { teamId: 'T1', channelId, threadTs: ts, userId: 'U1', prompt },
      Date.now(),
    );
    if (!running) return t;
    const job = { ...t, jobId: `job_${i}` };
    const schedule = { nextPollAt: null, pollIntervalMs: 5_000 };
    return store.attachJob(t.id, snapshot(job, 'active'), schedule, Date.now());
  };
  const burst: JobThread[] = [];
  for (let c = 0; c < CHANNELS; c++)
    for (let k = 0; k < PER_CHANNEL; k++) burst.push(await thread(`C${c}`, true));
  const threads = {
    burst,
    lone: await thread('CLONE', true),
    refused: await thread('CREFUSED', false),
    loneAlone: await thread('CLONE2', true),
    refusedAlone: await thread('CREFUSED2', false),
  };
  // The running roots already show "running": only what the burst changes is left to show.
  const lease = { owner: 'setup', until: Date.now() + 60_000 };
  for (const { id } of await store.pendingRootUpdates(Date.now(), 1_000)) {
    const t = await store.claimRootUpdate(id, Date.now(), lease);
    if (t) await store.markRootShown(t.id, t.rootVersion, 'setup');
  }
  return threads;
}

/** How long until a finished job is announced, and a refusal's root edit shown. */
function loneDelays(
  store: Store,
  slack: FakeSlack,
  kick: () => void,
  lone: JobThread,
  refused: JobThread,
): Promise<[number, number]> {
  const announce = async () => {
    await store.recordPoll(completion(lone));
    const t = performance.now();
    kick(); // as the poller does after recording
    await slack.waitFor(
      (c) =>
        c.method === 'chat.postMessage' && c.status === 200 && c.args.thread_ts === lone.threadTs,
      RUN_DEADLINE_MS,
    );
    return performance.now() - t;
  };
  const refuse = async () => {
    await store.startFailed(refused.id, REFUSAL, Date.now());
    const t = performance.now();
    kick(); // as the job service does after recording
    await slack.waitFor(
      (c) => c.method === 'chat.update' && c.status === 200 && c.args.ts === refused.threadTs,
      RUN_DEADLINE_MS,
    );
    return performance.now() - t;
  };
  const [a, r] = [announce(), refuse()];
  return Promise.all([a, r]);
}

async function waitUntil(done: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + RUN_DEADLINE_MS;
  while (!done()) {
    if (Date.now() > deadline) throw new Error(`notifier bench: ${what} not done in time`);
    await sleep(20);
  }
}

async function oneRun(store: Store, seed: number, latency: LatencyProfile): Promise<RunFigures> {
  const slack = await FakeSlack.start();
  try {
    const client = new WebClient(TOKEN, {
      ...webClientOptions(slack.url),
      logLevel: LogLevel.ERROR,
    });
    const chat = createSlackJobChat(oneClient(client), silentLogger());
    const threads = await setUp(store, chat);
    const notifier = startNotifier({
      store,
      chat,
      log: silentLogger(),
      owner: 'bench',
      leaseMs: 30_000,
      updateLimit: NOTIFIER_UPDATES,
    });
    try {
      await sleep(100); // its first pass finds nothing to do
      slack.useLatency(latency); // after the set-up: its 204 root posts are not measured
      slack.enforceRateLimits(SLACK_LIMITS);
      const from = slack.calls.length;
      for (const k of shuffled(JOBS, seed)) await store.recordPoll(completion(threads.burst[k]!));
      const t0 = Date.now();
      const started = performance.now();
      notifier.kick();
      await sleep(LONE_AFTER_MS);
      const kick = () => notifier.kick();
      const [loneMs, refusedMs] = await loneDelays(
        store,
        slack,
        kick,
        threads.lone,
        threads.refused,
      );

      const burstTs = new Set(threads.burst.map((t) => t.threadTs));
      const firstOk = (method: string, tsOf: (args: Record<string, unknown>) => unknown) => {
        const at = new Map<unknown, number>();
        for (const c of slack.calls.slice(from)) {
          const ts = tsOf(c.args);
          if (c.method === method && c.status === 200 && burstTs.has(ts as string) && !at.has(ts))
            at.set(ts, c.at - t0);
        }
        return [...at.values()];
      };
      const announced = () => firstOk('chat.postMessage', (a) => a.thread_ts);
      const shown = () => firstOk('chat.update', (a) => a.ts);
      await waitUntil(() => announced().length === JOBS, 'announcements');
      await waitUntil(() => shown().length === JOBS, 'root edits');
      const wallMs = performance.now() - started;
      const [loneAloneMs, refusedAloneMs] = await loneDelays(
        store,
        slack,
        kick,
        threads.loneAlone,
        threads.refusedAlone,
      );
      const delays = announced();
      const limited = (method: string) =>
        slack.calls.slice(from).filter((c) => c.method === method && c.status === 429).length;
      return {
        lastAnnouncementMs: Math.max(...delays),
        p50Ms: percentile(delays, 50),
        p99Ms: percentile(delays, 99),
        rootsShownMs: Math.max(...shown()),
        posts429: limited('chat.postMessage'),
        updates429: limited('chat.update'),
        loneMs,
        loneAloneMs,
        refusedMs,
        refusedAloneMs,
        wallMs,
      };
    } finally {
      await notifier.stop();
    }
  } finally {
    await slack.close();
  }
}

type Engine = 'sqlite' | 'postgres';

async function runs(engine: Engine, n: number, latency: LatencyProfile): Promise<RunFigures[]> {
  const out: RunFigures[] = [];
  const dir = mkdtempSync(join(tmpdir(), 'bench-notifier-'));
  try {
    for (let i = 0; i < n; i++) {
      const db = engine === 'postgres' ? await createTestDatabase() : undefined;
      const store = db
        ? await openPostgresStore(db.url, { log: silentLogger() })
        : await openSqliteStore(join(dir, `run-${i}.sqlite`));
      try {
        const r = await oneRun(store, 7 + i, latency);
        log(
          `notifier ${engine} run ${i + 1}/${n}: last announcement ${r.lastAnnouncementMs.toFixed(0)} ms, ` +
            `roots ${r.rootsShownMs.toFixed(0)} ms, lone ${r.loneMs.toFixed(1)} / alone ${r.loneAloneMs.toFixed(1)} ms, ` +
            `refusal ${r.refusedMs.toFixed(1)} / alone ${r.refusedAloneMs.toFixed(1)} ms, 429s ${r.posts429}+${r.updates429}`,
        );
        out.push(r);
      } finally {
        await store.close();
        await db?.drop();
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return out;
}

function metrics(engine: Engine, rs: RunFigures[]): Metric[] {
  const m = (name: string, unit: string, pick: (r: RunFigures) => number, target?: string) => ({
    name: `${engine}: ${name}`,
    unit,
    runs: rs.map(pick),
    ...(target ? { target } : {}),
  });
  const slackFloor = updateFloorMs(SLACK_LIMITS.update.perMinute);
  return [
    m('last of 200 announced', 'ms', (r) => r.lastAnnouncementMs, `floor ${POST_FLOOR_MS} ms`),
    m('last announced / floor', '×', (r) => r.lastAnnouncementMs / POST_FLOOR_MS, '≈ 1'),
    m('announcement delay p50', 'ms', (r) => r.p50Ms),
    m('announcement delay p99', 'ms', (r) => r.p99Ms),
    m('every root edit shown', 'ms', (r) => r.rootsShownMs, `floor ${slackFloor.toFixed(0)} ms`),
    m('root edits / floor', '×', (r) => r.rootsShownMs / slackFloor, '≈ 1'),
    m('429s on chat.postMessage', 'calls', (r) => r.posts429, '0'),
    m('429s on chat.update', 'calls', (r) => r.updates429, '0'),
    m('lone announcement, during burst', 'ms', (r) => r.loneMs),
    m('lone announcement, alone', 'ms', (r) => r.loneAloneMs),
    m('lone announcement, burst / alone', '×', (r) => r.loneMs / r.loneAloneMs, '≈ 1'),
    m('refusal root edit, during burst', 'ms', (r) => r.refusedMs),
    m('refusal root edit, alone', 'ms', (r) => r.refusedAloneMs),
    m('refusal root edit, burst / alone', '×', (r) => r.refusedMs / r.refusedAloneMs, '≈ 1'),
  ];
}

export async function benchNotifier(o: BenchOptions): Promise<BenchResult> {
  const probe = startMemoryProbe();
  const sqlite = await runs('sqlite', o.quick ? 1 : 5, o.latency);
  const postgres = !o.quick && postgresAvailable ? await runs('postgres', 3, o.latency) : [];
  const mem = probe.stop();
  const all = [...sqlite, ...postgres];
  const realFloorS = updateFloorMs(SLACK_RATE_LIMITS.update.perMinute) / 1000;
  return {
    name: 'notifier',
    runsMs: all.map((r) => r.wallMs),
    peakRssMb: mem.rss,
    peakHeapMb: mem.heap,
    notes: [
      `${JOBS} jobs over ${CHANNELS} channels finish at once; FakeSlack enforces 1 post/s per channel (burst 3)`,
      `chat.update budget ×${TIER3_SCALE} on both sides (${SLACK_LIMITS.update.perMinute}/min); at Slack's 50/min the root floor is ${realFloorS.toFixed(0)} s`,
      `root floor: Slack's burst of ${SLACK_RATE_LIMITS.update.burst}, then its rate; the notifier bursts ${NOTIFIER_UPDATES.burst} (one kept for answers)`,
      `lone channel: 1 job finishing, 1 /agent refused, ${LONE_AFTER_MS} ms into the burst vs after it`,
      `wall time: the burst until every announcement and root edit is shown`,
    ],
    stats: { medianLastMs: median(all.map((r) => r.lastAnnouncementMs)) },
    metrics: [
      ...metrics('sqlite', sqlite),
      ...(postgres.length ? metrics('postgres', postgres) : []),
    ],
  };
}
