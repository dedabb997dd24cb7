/**
 * Benchmark: per-workspace fairness in distributed mode. `--workspaces` busy workspaces
 * (default 50) with `--jobs` watched jobs each (default 200) on PostgreSQL, served by two
 * replicas (each its own store pool, API client, poller and notifier with per-workspace
 * limits, both in this process), all jobs finishing at once; meanwhile a few quiet
 * workspaces' jobs finish one by one. Measured: how long each quiet job takes from the
 * moment the agent API reports it finished to its announcement in Slack (fake Slack, each
 * workspace with its own token), under the burst and alone (the same quiet jobs, no busy
 * workspaces), and the ratio. Polls are on a 1 s interval (POLL_INTERVAL_MS = 1000, no
 * back-off) so that the time to notice a finish is about half a second either way.
 *
 * The replicas are the bot's real poller and notifier, not `npm start` processes: in this
 * version a distributed bot's polls have no API key of the workspace's (per-workspace API
 * clients come later), so a process could not poll. Nothing here asserts a time.
 */
import { WebClient } from '@slack/web-api';
import { ApiClient } from '../src/api/client.ts';
import type { Loop } from '../src/jobs/loop.ts';
import { startNotifier } from '../src/jobs/notifier.ts';
import { type Poller, startPoller } from '../src/jobs/poller.ts';
import { webClientOptions } from '../src/slack/app.ts';
import { createSlackJobChat } from '../src/slack/chat.ts';
import type { ClientSource } from '../src/slack/workspace-clients.ts';
import { openPostgresStore } from '../src/store/postgres.ts';
import type { Store } from '../src/store/types.ts';
import { ApiEmulator } from '../test/fakes/api-emulator.ts';
import type { LatencyProfile } from '../test/fakes/latency.ts';
import { FakeSlack } from '../test/fakes/slack.ts';
import { createTestDatabase, postgresAvailable } from '../test/helpers/postgres.ts';
import {
  type BenchOptions,
  type BenchResult,
  log,
  type Metric,
  PROJECT,
  percentile,
  SECRETS,
  silentLogger,
  startMemoryProbe,
} from './measure.ts';
import { type SeedJob, seedJobs } from './poller-world.ts';

const CHANNELS_PER_BUSY = 10;
const QUIET_WORKSPACES = 10;
const QUIET_JOBS = 3;
const POLL_MS = 1_000;
const LEASE_MS = 30_000;
/** Polls run this long before the burst: the pools widen to the load. */
const WARM_MS = 3_000;
/** Quiet jobs finish this far apart, from half a second after the burst. */
const QUIET_STEP_MS = 400;
const DEADLINE_MS = 120_000;

interface Shape {
  workspaces: number;
  jobs: number;
}

function argOf(name: string, def: number): number {
  const i = process.argv.indexOf(`--${name}`);
  const v = i >= 0 ? Number(process.argv[i + 1]) : Number.NaN;
  return Number.isFinite(v) && v >= 0 ? v : def;
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, Math.max(0, ms)));

interface Job {
  team: string;
  channel: string;
  jobId: string;
  ts: string;
}

/** The jobs of the run: busy workspaces' (none when alone) and the quiet ones'. */
function jobsOf(shape: Shape): { busy: Job[]; quiet: Job[] } {
  const busy: Job[] = [];
  for (let w = 0; w < shape.workspaces; w++)
    for (let j = 0; j < shape.jobs; j++)
      busy.push({
        team: `TB${w}`,
        channel: `CB${w}x${j % CHANNELS_PER_BUSY}`,
        jobId: `job_b${w}_${j}`,
        ts: '',
      });
  const quiet: Job[] = [];
  // In turn across the quiet workspaces: one channel's jobs finish seconds apart, so
  // Slack's pace in a channel (a post a second) is not what is measured.
  for (let j = 0; j < QUIET_JOBS; j++)
    for (let w = 0; w < QUIET_WORKSPACES; w++)
      quiet.push({ team: `TQ${w}`, channel: `CQ${w}`, jobId: `job_q${w}_${j}`, ts: '' });
  return { busy, quiet };
}

interface Replica {
  store: Store;
  api: ApiClient;
  poller: Poller;
  notifier: Loop;
}

/** One replica as the bot builds its loops in distributed mode (src/app/background.ts). */
async function startReplica(url: string, n: number, apiUrl: string, clients: ClientSource) {
  const silent = silentLogger();
  const store = await openPostgresStore(url, { log: silent });
  const api = new ApiClient({
    baseUrl: apiUrl,
    apiKey: SECRETS.apiKey,
    projectId: PROJECT,
    log: silent,
  });
  const owner = `bench-replica-${n}`;
  const notifier = startNotifier({
    store,
    chat: createSlackJobChat(clients, silent),
    log: silent,
    owner,
    leaseMs: LEASE_MS,
    perWorkspace: true,
  });
  const poller = startPoller({
    store,
    api,
    log: silent,
    backoff: { baseMs: POLL_MS, maxMs: POLL_MS },
    owner,
    leaseMs: LEASE_MS,
    onChange: () => notifier.kick(),
  });
  return { store, api, poller, notifier } satisfies Replica;
}

async function stopReplica(r: Replica): Promise<void> {
  await r.poller.stop();
  await r.notifier.stop();
  r.api.stop();
  await r.store.close();
}

interface RunFigures {
  quietMs: number[];
  /** Of that: the API's finish until a poll recorded it (the rest is the notifier's). */
  quietPollMs: number[];
  /** When the last busy job was announced, from the burst (NaN: not within the deadline). */
  busyDoneMs: number;
  busyAnnounced: number;
}

/** Adds the workspaces to Slack, each with its channels and token; a client per workspace. */
function workspacesIn(slack: FakeSlack, jobs: Job[]): ClientSource {
  const channels = new Map<string, Set<string>>();
  for (const j of jobs) channels.set(j.team, (channels.get(j.team) ?? new Set()).add(j.channel));
  const clients = new Map<string, WebClient>();
  let i = 0;
  for (const [team, cs] of channels) {
    const { botToken } = slack.addWorkspace({
      team,
      name: `Workspace ${team}`,
      botUser: `UBOT${i++}`,
      channels: [...cs],
    });
    clients.set(team, new WebClient(botToken, webClientOptions(slack.url)));
  }
  return {
    clientFor: async (ws) => {
      const c = clients.get(ws.teamId);
      if (!c) throw new Error(`no workspace ${ws.teamId}`);
      return c;
    },
  };
}

/** When a poll recorded each job's finish (its status changed: the announcement went into the outbox). */
async function recordedAt(
  store: Store,
  jobs: Job[],
  threadOf: Map<string, number>,
): Promise<Map<string, number>> {
  const at = new Map<string, number>();
  for (const j of jobs) {
    const t = await store.getThread(threadOf.get(j.jobId) ?? -1);
    if (t?.changedAt != null) at.set(j.jobId, t.changedAt);
  }
  return at;
}

async function oneRun(shape: Shape, latency: LatencyProfile): Promise<RunFigures> {
  const db = await createTestDatabase();
  const slack = await FakeSlack.start();
  const api = await ApiEmulator.start({ apiKey: SECRETS.apiKey, projectId: PROJECT });
  const replicas: Replica[] = [];
  try {
    const { busy, quiet } = jobsOf(shape);
    const all = [...busy, ...quiet];
    const clients = workspacesIn(slack, all);
    for (const j of all) api.setJob(j.jobId, { status: 'active' });
    // The bot's schema first (the first replica's store migrates), then the watched jobs.
    const first = await openPostgresStore(db.url, { log: silentLogger() });
    await first.close();
    const now = Date.now();
    const seeds: SeedJob[] = all.map((j) => ({
      jobId: j.jobId,
      teamId: j.team,
      channel: j.channel,
      createdAt: now,
      nextPollAt: now,
      pollIntervalMs: POLL_MS,
    }));
    const threadOf = await seedJobs({ kind: 'postgres', url: db.url }, seeds);
    // The thread each seeded job has (seedJobs numbers them in order).
    for (const [i, j] of all.entries()) j.ts = `${1_700_000_000 + i}.000100`;
    slack.useLatency(latency);
    api.useLatency(latency);
    for (let n = 1; n <= 2; n++) replicas.push(await startReplica(db.url, n, api.url, clients));
    await sleep(WARM_MS);
    const burstAt = Date.now();
    for (const j of busy) api.complete(j.jobId, `https://github.com/acme/docs/pull/${j.jobId}`);
    const finishedAt = new Map<string, number>();
    for (const [i, j] of quiet.entries()) {
      await sleep(burstAt + 500 + i * QUIET_STEP_MS - Date.now());
      api.complete(j.jobId, `https://github.com/acme/docs/pull/${j.jobId}`);
      finishedAt.set(j.ts, Date.now());
    }
    const busyTs = new Set(busy.map((j) => j.ts));
    const landed = new Map<string, number>();
    let seen = 0;
    const deadline = Date.now() + DEADLINE_MS;
    for (;;) {
      for (; seen < slack.calls.length; seen++) {
        const c = slack.calls[seen]!;
        const ts = String((c.args as { thread_ts?: string }).thread_ts ?? '');
        if (c.method === 'chat.postMessage' && c.status === 200 && ts && !landed.has(ts))
          landed.set(ts, c.at);
      }
      const quietDone = quiet.every((j) => landed.has(j.ts));
      const busyDone = [...busyTs].every((ts) => landed.has(ts));
      if ((quietDone && busyDone) || Date.now() > deadline) break;
      await sleep(50);
    }
    const quietMs = quiet
      .filter((j) => landed.has(j.ts))
      .map((j) => landed.get(j.ts)! - finishedAt.get(j.ts)!);
    const recorded = await recordedAt(replicas[0]!.store, quiet, threadOf);
    const quietPollMs = quiet
      .filter((j) => recorded.has(j.jobId))
      .map((j) => recorded.get(j.jobId)! - finishedAt.get(j.ts)!);
    const busyTimes = [...busyTs].map((ts) => landed.get(ts)).filter((t) => t !== undefined);
    return {
      quietMs,
      quietPollMs,
      busyAnnounced: busyTimes.length,
      busyDoneMs:
        busyTimes.length === busy.length && busy.length > 0
          ? Math.max(...busyTimes) - burstAt
          : Number.NaN,
    };
  } finally {
    for (const r of replicas) await stopReplica(r);
    await slack.close();
    await api.close();
    await db.drop();
  }
}

function metrics(loaded: RunFigures[], alone: RunFigures[]): Metric[] {
  const q = (rs: RunFigures[], p: number) => rs.map((r) => percentile(r.quietMs, p));
  const m = (name: string, unit: string, runs: number[], target?: string): Metric => ({
    name,
    unit,
    runs,
    ...(target ? { target } : {}),
  });
  const ratio = (p: number) =>
    loaded.map((r, i) => percentile(r.quietMs, p) / percentile(alone[i]!.quietMs, p));
  return [
    m('quiet announcement p50, burst', 'ms', q(loaded, 50)),
    m('quiet announcement p95, burst', 'ms', q(loaded, 95)),
    m(
      'of which until polled, p50, burst',
      'ms',
      loaded.map((r) => percentile(r.quietPollMs, 50)),
    ),
    m('quiet announcement p50, alone', 'ms', q(alone, 50)),
    m('quiet announcement p95, alone', 'ms', q(alone, 95)),
    m('quiet p50 burst / alone', '×', ratio(50), '≈ 1'),
    m('quiet p95 burst / alone', '×', ratio(95), '≈ 1'),
    m(
      'every busy job announced',
      's',
      loaded.map((r) => r.busyDoneMs / 1000),
    ),
  ];
}

export async function benchFairness(o: BenchOptions): Promise<BenchResult> {
  if (!postgresAvailable) throw new Error('the fairness benchmark needs PostgreSQL');
  const shape = {
    workspaces: argOf('workspaces', o.quick ? 10 : 50),
    jobs: argOf('jobs', o.quick ? 50 : 200),
  };
  const runs = o.quick ? 1 : 2;
  const probe = startMemoryProbe();
  const loaded: RunFigures[] = [];
  const alone: RunFigures[] = [];
  const wall: number[] = [];
  for (let i = 0; i < runs; i++) {
    const started = performance.now();
    const r = await oneRun(shape, o.latency);
    wall.push(performance.now() - started);
    const a = await oneRun({ workspaces: 0, jobs: 0 }, o.latency);
    const p = (xs: number[], n: number) => percentile(xs, n).toFixed(0);
    log(
      `fairness run ${i + 1}/${runs}: quiet p50/p95 ${p(r.quietMs, 50)}/${p(r.quietMs, 95)} ms under the burst ` +
        `(poll part ${p(r.quietPollMs, 50)}/${p(r.quietPollMs, 95)}) ` +
        `(${r.quietMs.length} of ${QUIET_WORKSPACES * QUIET_JOBS}), ${p(a.quietMs, 50)}/${p(a.quietMs, 95)} ms alone; ` +
        `busy ${r.busyAnnounced}/${shape.workspaces * shape.jobs} announced, last at ${(r.busyDoneMs / 1000).toFixed(1)} s`,
    );
    loaded.push(r);
    alone.push(a);
  }
  const mem = probe.stop();
  return {
    name: 'fairness',
    runsMs: wall,
    peakRssMb: mem.rss,
    peakHeapMb: mem.heap,
    notes: [
      `${shape.workspaces} busy workspaces × ${shape.jobs} jobs (${CHANNELS_PER_BUSY} channels each) finish at once; ` +
        `${QUIET_WORKSPACES} quiet workspaces' ${QUIET_WORKSPACES * QUIET_JOBS} jobs finish ${QUIET_STEP_MS} ms apart from 0.5 s after`,
      'PostgreSQL, two replicas (poller + notifier each, in this process), polls every 1 s, each workspace its own token',
      'quiet announcement: from the API reporting the job finished to the post taking effect in Slack',
      'alone: the same quiet jobs with no busy workspace',
    ],
    stats: {},
    metrics: metrics(loaded, alone),
  };
}
