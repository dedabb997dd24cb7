/**
 * Benchmark: per-workspace fairness in distributed mode, against the real process. Two
 * replicas of the bot as `npm start` runs it (bench/fairness-world.ts) on one fresh
 * PostgreSQL database, the fake Slack with a workspace per team (each its own token, from its
 * own OAuth install) and the API emulator with a project per workspace (each its own key).
 *
 * `--workspaces` busy workspaces (default 50) with `--jobs` watched jobs each (default 200)
 * all finish at once; meanwhile 10 quiet workspaces' 30 jobs finish one by one, and, 2 s into
 * the burst, the quiet workspaces send 40 `/agent <prompt>` at once (4 each, in a channel of
 * their own), then an `/agent status` each, over signed HTTP, split across the replicas as a
 * load balancer would. Then the same quiet jobs and commands alone (no busy workspace), on a
 * fresh world. Polls run at the bot's defaults (POLL_INTERVAL_MS 5 s: fresh jobs are polled
 * every 5 s). Measured: a quiet job's finish at the API → its announcement in Slack; the last
 * busy announcement; the quiet senders' first answer and status answer (as bench/burst.ts
 * counts them); each replica's RSS. Nothing here asserts a time.
 */
import type { ApiEmulator } from '../test/fakes/api-emulator.ts';
import type { LatencyProfile } from '../test/fakes/latency.ts';
import { postgresAvailable } from '../test/helpers/postgres.ts';
import { type Cmd, Seen } from './burst-seen.ts';
import {
  logRun,
  max,
  metrics,
  QUIET_JOBS,
  QUIET_WORKSPACES,
  type RunFigures,
} from './fairness-figures.ts';
import { startProbe } from './fairness-probe.ts';
import {
  closeWorld,
  command,
  connectDocs,
  install,
  openStore,
  openWorld,
  type Replica,
  sampleRss,
  sleep,
  startReplicas,
  stopReplicas,
  type Workspace,
  type World,
  workspace,
} from './fairness-world.ts';
import type { BenchOptions, BenchResult } from './measure.ts';
import { type SeedJob, seedJobs } from './poller-world.ts';

const CHANNELS_PER_BUSY = 10;
/** `/agent <prompt>` per quiet workspace, all at once (40 in all: the burst benchmark's 40). */
const QUIET_COMMANDS = 4;
/** The bot's default poll delays (POLL_INTERVAL_MS, POLL_MAX_INTERVAL_MS). */
const POLL_MS = 5_000;
const OLD_POLL_MS = 60_000;
/**
 * Busy jobs polled every 5 s (started or changed within the minute), as bench/poller.ts and
 * bench/memory.ts seed their 10,000: the rest are older, polled every minute. `--fresh` makes
 * every busy job young (2,000 polls a second before the burst: the stress case). Quiet jobs
 * are always young.
 */
const YOUNG_SHARE = 0.1;
/** Replicas run this long before the burst: every job polled once, the pools widened. */
const WARM_MS = 8_000;
/** Quiet jobs finish this far apart, from half a second after the burst. */
const QUIET_STEP_MS = 400;
/** The quiet workspaces' commands, this long after the burst. */
const COMMANDS_AT_MS = 2_000;
const DEADLINE_MS = 240_000;

interface Shape {
  workspaces: number;
  jobs: number;
  /** Every busy job young (polled every 5 s). */
  fresh: boolean;
}

function argOf(name: string, def: number): number {
  const i = process.argv.indexOf(`--${name}`);
  const v = i >= 0 ? Number(process.argv[i + 1]) : Number.NaN;
  return Number.isFinite(v) && v >= 0 ? v : def;
}

interface Job {
  ws: Workspace;
  channel: string;
  jobId: string;
  ts: string;
  young: boolean;
}

/** The workspaces and jobs of a run: busy ones (none when alone) and the quiet ones. */
function worldOf(shape: Shape) {
  const busyWs = Array.from({ length: shape.workspaces }, (_, w) =>
    workspace(
      `TB${w}`,
      Array.from({ length: CHANNELS_PER_BUSY }, (_, c) => `CB${w}x${c}`),
    ),
  );
  // Its /agent warm each replica's code up before the burst, as bench/burst.ts does.
  const warmWs = workspace('TW0', ['CW0'], 2);
  const quietWs = Array.from({ length: QUIET_WORKSPACES }, (_, w) =>
    workspace(`TQ${w}`, [`CQ${w}`, `CQ${w}cmd`], QUIET_COMMANDS + 1),
  );
  const busy: Job[] = [];
  for (const [w, ws] of busyWs.entries())
    for (let j = 0; j < shape.jobs; j++)
      busy.push({
        ws,
        channel: ws.channels[j % CHANNELS_PER_BUSY]!,
        jobId: `job_b${w}_${j}`,
        ts: '',
        young: shape.fresh || j % Math.round(1 / YOUNG_SHARE) === 0,
      });
  const quiet: Job[] = [];
  // In turn across the quiet workspaces: one channel's jobs finish seconds apart, so
  // Slack's pace in a channel (a post a second) is not what is measured.
  for (let j = 0; j < QUIET_JOBS; j++)
    for (const [w, ws] of quietWs.entries())
      quiet.push({
        ws,
        channel: ws.channels[0]!,
        jobId: `job_q${w}_${j}`,
        ts: '',
        young: true,
      });
  return { workspaces: [...busyWs, ...quietWs, warmWs], warmWs, quietWs, busy, quiet };
}

/** Installs every workspace (OAuth, through a first replica), connects its docs, stops. */
async function installAll(world: World, workspaces: Workspace[]): Promise<void> {
  await startReplicas(world, 1);
  for (const ws of workspaces) await install(world, ws);
  await connectDocs(world, workspaces);
  await stopReplicas(world);
}

/**
 * Seeds the watched jobs, each in its workspace's project, as a bot that has run a while
 * leaves them: due at moments spread over their interval (young 5 s, old a minute).
 */
async function seed(world: World, api: ApiEmulator, jobs: Job[]) {
  const now = Date.now();
  for (const j of jobs) api.setJob(j.jobId, { status: 'active' }, j.ws.projectId);
  const seeds: SeedJob[] = jobs.map((j) => {
    const age = j.young ? Math.random() * 20_000 : (10 + Math.random() * 50) * 60_000;
    const interval = j.young ? POLL_MS : OLD_POLL_MS;
    return {
      jobId: j.jobId,
      teamId: j.ws.team,
      channel: j.channel,
      createdAt: Math.round(now - age),
      nextPollAt: now + Math.round(Math.random() * interval),
      pollIntervalMs: interval,
    };
  });
  const threadOf = await seedJobs({ kind: 'postgres', url: world.db.url }, seeds);
  // The thread each seeded job has (seedJobs numbers them in order).
  for (const [i, j] of jobs.entries()) j.ts = `${1_700_000_000 + i}.000100`;
  return threadOf;
}

/** 4 `/agent` from each quiet workspace at once, then a status from each once all are acked. */
async function quietCommands(
  world: World,
  quietWs: Workspace[],
  seen: Seen,
): Promise<[Cmd[], Cmd[]]> {
  const replica = (i: number): Replica => world.replicas[i % world.replicas.length]!;
  const send = async (r: Replica, ws: Workspace, cmd: Cmd) => {
    seen.expect(cmd);
    cmd.sentAt = Date.now();
    const text = await command(r, {
      team: ws.team,
      user: cmd.user,
      channel: cmd.channel,
      text: cmd.text,
      responseUrl: world.slack.responseUrl(cmd.responseId),
    });
    if (text.trim() !== '') seen.ack(cmd.token, Date.now());
  };
  const cmd = (ws: Workspace, user: string, token: string, text: string): Cmd => ({
    token,
    text,
    channel: ws.channels[1]!,
    user,
    responseId: `r-${token}`,
    sentAt: 0,
  });
  const jobs = quietWs.flatMap((ws, w) =>
    Array.from({ length: QUIET_COMMANDS }, (_, k) => {
      const token = `burstQ${String(w * QUIET_COMMANDS + k).padStart(3, '0')}`;
      return { ws, c: cmd(ws, ws.users[k]!, token, `${token}: document setting ${k} in the FAQ`) };
    }),
  );
  await Promise.all(jobs.map(({ ws, c }, i) => send(replica(i), ws, c)));
  const statuses = quietWs.map((ws, w) => ({
    ws,
    c: cmd(ws, ws.users[QUIET_COMMANDS]!, `status${String.fromCharCode(65 + w)}`, 'status'),
  }));
  await Promise.all(statuses.map(({ ws, c }, i) => send(replica(i), ws, c)));
  return [jobs.map((j) => j.c), statuses.map((s) => s.c)];
}

/** An `/agent` to each replica from a workspace of its own; answers once their jobs exist. */
async function warmUp(world: World, ws: Workspace): Promise<void> {
  const created = world.api.createdJobs().length;
  for (const [i, r] of world.replicas.entries())
    await command(r, {
      team: ws.team,
      user: ws.users[i % ws.users.length]!,
      channel: ws.channels[0]!,
      text: `warm up ${i}`,
      responseUrl: world.slack.responseUrl(),
    });
  for (const end = Date.now() + 30_000; Date.now() < end; await sleep(50))
    if (world.api.createdJobs().length >= created + world.replicas.length) return;
  throw new Error('the warm-up jobs were not created in 30 s');
}

async function oneRun(shape: Shape, latency: LatencyProfile): Promise<RunFigures> {
  const { workspaces, warmWs, quietWs, busy, quiet } = worldOf(shape);
  const world = await openWorld(workspaces);
  try {
    await installAll(world, workspaces);
    const all = [...busy, ...quiet];
    const threadOf = await seed(world, world.api, all);
    world.slack.useLatency(latency);
    world.api.useLatency(latency);
    await startReplicas(world, 2);
    const warmed = Date.now();
    await warmUp(world, warmWs);
    const probe = startProbe(world);
    const warmFrom = await probe.begin();
    await sleep(warmed + WARM_MS - Date.now());
    const warm = await probe.end(warmFrom);
    const burstFrom = await probe.begin();
    const rss = sampleRss(world);
    const seen = new Seen(world.slack);
    const burstAt = Date.now();
    for (const j of busy)
      world.api.complete(j.jobId, `https://github.com/acme/docs/pull/${j.jobId}`);
    const finishedAt = new Map<string, number>();
    const finishing = (async () => {
      for (const [i, j] of quiet.entries()) {
        await sleep(burstAt + 500 + i * QUIET_STEP_MS - Date.now());
        world.api.complete(j.jobId, `https://github.com/acme/docs/pull/${j.jobId}`);
        finishedAt.set(j.ts, Date.now());
      }
    })();
    const commands = sleep(COMMANDS_AT_MS).then(() => quietCommands(world, quietWs, seen));
    const [[cmds, statuses]] = await Promise.all([commands, finishing]);
    const burst = await probe.end(burstFrom);
    const landed = new Map<string, number>();
    let read = 0;
    const busyTs = new Set(busy.map((j) => j.ts));
    for (const deadline = Date.now() + DEADLINE_MS; Date.now() < deadline; await sleep(50)) {
      for (; read < world.slack.calls.length; read++) {
        const c = world.slack.calls[read]!;
        const ts = String((c.args as { thread_ts?: string }).thread_ts ?? '');
        if (c.method === 'chat.postMessage' && c.status === 200 && ts && !landed.has(ts))
          landed.set(ts, c.at);
      }
      seen.update();
      probe.countGets();
      const answered = [...cmds, ...statuses].every((c) => seen.first.has(c.token));
      if (
        answered &&
        quiet.every((j) => landed.has(j.ts)) &&
        [...busyTs].every((t) => landed.has(t))
      )
        break;
    }
    const store = await openStore(world);
    const recorded = new Map<string, number>();
    try {
      for (const j of quiet) {
        const t = await store.getThread(threadOf.get(j.jobId) ?? -1);
        if (t?.changedAt != null) recorded.set(j.ts, t.changedAt);
      }
    } finally {
      await store.close();
    }
    const since = (at: Map<string, number>, j: Job) => at.get(j.ts)! - finishedAt.get(j.ts)!;
    const busyTimes = [...busyTs].map((ts) => landed.get(ts)).filter((t) => t !== undefined);
    const answerMs = (cs: Cmd[]) =>
      cs.map((c) => (seen.first.get(c.token) ?? Number.NaN) - c.sentAt);
    return {
      quietMs: quiet.filter((j) => landed.has(j.ts)).map((j) => since(landed, j)),
      quietPollMs: quiet.filter((j) => recorded.has(j.ts)).map((j) => since(recorded, j)),
      busyAnnounced: busyTimes.length,
      busyDoneMs:
        busyTimes.length === busy.length && busy.length > 0
          ? Math.max(...busyTimes) - burstAt
          : Number.NaN,
      firstMs: answerMs(cmds),
      statusMs: answerMs(statuses),
      rss: rss.stop(),
      warm,
      burst,
    };
  } finally {
    await closeWorld(world);
  }
}

export async function benchFairness(o: BenchOptions): Promise<BenchResult> {
  if (!postgresAvailable) throw new Error('the fairness benchmark needs PostgreSQL');
  const shape = {
    workspaces: argOf('workspaces', o.quick ? 10 : 50),
    jobs: argOf('jobs', o.quick ? 50 : 200),
    fresh: process.argv.includes('--fresh'),
  };
  const runs = argOf('runs', o.quick ? 1 : 2);
  const loaded: RunFigures[] = [];
  const alone: RunFigures[] = [];
  const wall: number[] = [];
  for (let i = 0; i < runs; i++) {
    const started = performance.now();
    const r = await oneRun(shape, o.latency);
    wall.push(performance.now() - started);
    const a = await oneRun({ workspaces: 0, jobs: 0, fresh: false }, o.latency);
    logRun(i, runs, shape, r, a);
    loaded.push(r);
    alone.push(a);
  }
  return {
    name: 'fairness',
    runsMs: wall,
    peakRssMb: Math.max(...loaded.flatMap((r) => r.rss.map(max))),
    peakHeapMb: 0,
    notes: [
      `${shape.workspaces} busy workspaces × ${shape.jobs} jobs (${CHANNELS_PER_BUSY} channels each; ` +
        `${shape.fresh ? 'all' : `${YOUNG_SHARE * 100} %`} polled every ${POLL_MS / 1000} s, ` +
        `${shape.fresh ? 'none' : 'the rest'} every ${OLD_POLL_MS / 1000} s) finish at once; ` +
        `${QUIET_WORKSPACES} quiet workspaces' ${QUIET_WORKSPACES * QUIET_JOBS} jobs finish ${QUIET_STEP_MS} ms apart from 0.5 s after, ` +
        `and ${COMMANDS_AT_MS / 1000} s after it they send ${QUIET_WORKSPACES * QUIET_COMMANDS} /agent at once, then a status each`,
      'two replicas of `npm start` (distributed mode, PostgreSQL, the default poll settings), each workspace installed with OAuth ' +
        '(its own token) and connected to its own project and key; fakes and senders in this process',
      'quiet announcement: from the API reporting the job finished to the post taking effect in Slack; ' +
        'first answer: as bench/burst.ts counts it; alone: the same quiet jobs and commands, no busy workspace',
      'peak rss: absolute, of the replicas\u2019 node processes (not a Δ)',
    ],
    stats: {},
    metrics: metrics(loaded, alone),
  };
}
