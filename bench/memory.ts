/**
 * Benchmark of the real process's memory: `npm start` itself (the package's prestart and start
 * scripts, so the flags and the entry point are whatever they say), against the fake Slack and
 * the API emulator served from this process, on a SQLite file. Twice: idle (no jobs), then with
 * 10,000 live jobs seeded into the database before the start, which the bot polls. The
 * resident set (VmRSS from /proc) of the bot's node process, not npm's, is sampled every
 * SAMPLE_MS. It prints numbers against the targets; nothing here asserts them.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openSqliteStore } from '../src/store/sqlite.ts';
import { ApiEmulator } from '../test/fakes/api-emulator.ts';
import { FakeSlack } from '../test/fakes/slack.ts';
import { freePort, sleep } from '../test/helpers/net.ts';
import {
  answers,
  type BotProcess,
  commandLine,
  descendants,
  spawnNpmStart,
} from '../test/helpers/process.ts';
import {
  type BenchOptions,
  type BenchResult,
  benchBotEnv,
  botEntry,
  log,
  MB,
  type Metric,
  median,
  PROJECT,
  SECRETS,
} from './measure.ts';
import { type SeedJob, seedJobs } from './poller-world.ts';

const JOBS = 10_000;
/** As the poller benchmark seeds them: a tenth young (5 s polls), the rest old (60 s). */
const YOUNG_SHARE = 0.1;
const BASE_MS = 5_000;
const MAX_MS = 60_000;
const SAMPLE_MS = 500;
/** Linux's USER_HZ, the unit of /proc/<pid>/stat's times (100 on every common build). */
const CLOCK_TICKS = 100;
/** Left out of the samples: the start's own allocations, and the first burst of overdue polls. */
const SETTLE_MS = 3_000;
const TARGET = { idleMb: 110, jobsMb: 150 };

interface Phase {
  /** VmRSS samples of the bot's node process, MB. */
  rss: number[];
  /** nodejs_heap_size_used_bytes from /metrics at the end, MB. */
  heapMb: number;
  /** V8's heap as committed (nodejs_heap_size_total_bytes) at the end, MB. */
  heapTotalMb: number;
  /** At the end: file-backed pages, and anonymous memory other than V8's heap, MB. */
  fileMb: number;
  otherMb: number;
  /** GETs the emulator answered while the samples were taken. */
  gets: number;
  /** CPU time (user + system) the bot's process used while the samples were taken, s. */
  cpuS: number;
  wallMs: number;
}

/**
 * Where the resident set is, from /proc/<pid>/smaps: file-backed pages (the node binary and
 * shared libraries, which other processes share), and anonymous memory split into V8's heap
 * (its committed size, from /metrics) and the rest (malloc arenas, buffers, thread stacks).
 */
function breakdown(pid: number, heapTotalMb: number): { fileMb: number; anonMb: number } {
  let file = 0;
  let anon = 0;
  let named = false;
  for (const line of readFileSync(`/proc/${pid}/smaps`, 'utf8').split('\n')) {
    const m = /^[0-9a-f]+-[0-9a-f]+ \S+ \S+ \S+ (\d+)\s*(\S*)/.exec(line);
    if (m) named = m[1] !== '0' && m[2]!.startsWith('/');
    else if (line.startsWith('Rss:')) {
      const kb = Number(line.split(/\s+/)[1]);
      if (named) file += kb;
      else anon += kb;
    }
  }
  return { fileMb: file / 1024, anonMb: anon / 1024 - heapTotalMb };
}

function rssMb(pid: number): number {
  const kb = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
  if (!kb) throw new Error(`no VmRSS for ${pid}`);
  return (Number(kb) * 1024) / MB;
}

/** The jobs of a bot that has run for an hour: due at moments spread over their interval. */
function seedPlan(at: number): SeedJob[] {
  const young = Math.round(JOBS * YOUNG_SHARE);
  return Array.from({ length: JOBS }, (_, i) => {
    const isYoung = i < young;
    const age = isYoung ? Math.random() * 20_000 : (10 + Math.random() * 50) * 60_000;
    return {
      jobId: `${isYoung ? 'y' : 'o'}${i}`,
      channel: `C${i % 1000}`,
      createdAt: Math.round(at - age),
      nextPollAt: Math.round(at + Math.random() * (isYoung ? BASE_MS : MAX_MS)),
      pollIntervalMs: isYoung ? BASE_MS : MAX_MS,
    };
  });
}

/** SIGTERM to npm (as a process manager would send it), SIGKILL to all if it lingers. */
async function stop(npm: BotProcess, tree: number[]): Promise<void> {
  npm.child.kill('SIGTERM');
  const timer = setTimeout(() => {
    for (const pid of [npm.child.pid!, ...tree])
      try {
        process.kill(pid, 'SIGKILL');
      } catch {} // gone
  }, 15_000);
  await npm.exited.finally(() => clearTimeout(timer));
}

/** Starts `npm start`, waits for /healthz, samples the bot's RSS for `ms`, stops it. */
/** utime + stime of `pid` from /proc (Linux), in seconds. */
function cpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // After the command's closing parenthesis: state is field 3, utime 14 and stime 15.
  return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS;
}

async function phase(
  env: Record<string, string>,
  api: ApiEmulator,
  ms: number,
  label: string,
): Promise<Phase> {
  const port = await freePort();
  const started = performance.now();
  const npm = spawnNpmStart({ ...env, ...benchBotEnv(), PORT: String(port) });
  let tree: number[] = [];
  try {
    await answers(`http://127.0.0.1:${port}/healthz`, 30_000);
    tree = descendants(npm.child.pid!);
    const bot = tree.find((pid) => commandLine(pid)?.match(/\bnode\b.*\.(m?js|ts)\b/));
    if (!bot) throw new Error(`no node process under npm: ${tree.map(commandLine).join('; ')}`);
    log(`memory ${label}: bot pid ${bot}: ${commandLine(bot)}`);
    await sleep(SETTLE_MS);
    api.requests.length = 0;
    let gets = 0;
    const rss: number[] = [];
    const cpu0 = cpuSeconds(bot);
    for (const end = performance.now() + ms; performance.now() < end; ) {
      await sleep(SAMPLE_MS);
      rss.push(rssMb(bot));
      gets += api.requests.filter((r) => r.kind === 'get').length;
      api.requests.length = 0; // the emulator keeps every request: its memory, not the bot's
    }
    const cpuS = cpuSeconds(bot) - cpu0;
    const metrics = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
    const gauge = (name: string) =>
      Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(metrics)?.[1] ?? Number.NaN) / MB;
    const heapTotalMb = gauge('nodejs_heap_size_total_bytes');
    const { fileMb, anonMb } = breakdown(bot, heapTotalMb);
    log(
      `memory ${label}: rss median ${median(rss).toFixed(1)} MB, peak ${Math.max(...rss).toFixed(1)} MB, ` +
        `${gets} GETs in ${(ms / 1000).toFixed(0)} s`,
    );
    return {
      ...{ rss, heapMb: gauge('nodejs_heap_size_used_bytes'), heapTotalMb, fileMb },
      ...{ otherMb: anonMb, gets, cpuS, wallMs: performance.now() - started },
    };
  } catch (err) {
    log(npm.output().slice(-2_000));
    throw err;
  } finally {
    await stop(npm, tree);
  }
}

export async function benchMemory(o: BenchOptions): Promise<BenchResult> {
  const idleMs = o.quick ? 5_000 : 20_000;
  const jobsMs = o.quick ? 15_000 : 60_000;
  botEntry(); // builds dist/ if stale, as prestart would: out of the measured window
  const slack = await FakeSlack.start();
  const api = await ApiEmulator.start({ apiKey: SECRETS.apiKey, projectId: PROJECT });
  // At realistic latency more polls are in flight at once, each holding its buffers.
  slack.useLatency(o.latency);
  api.useLatency(o.latency);
  const dir = mkdtempSync(join(tmpdir(), 'bench-memory-'));
  const env = (file: string) => ({
    SLACK_BOT_TOKEN: SECRETS.botToken,
    SLACK_SIGNING_SECRET: SECRETS.signingSecret,
    SLACK_API_URL: slack.url,
    MINTLIFY_API_KEY: SECRETS.apiKey,
    MINTLIFY_PROJECT_ID: PROJECT,
    MINTLIFY_API_URL: api.url,
    DATABASE_URL: `sqlite:${join(dir, file)}`,
    // The idle start fills it; the second is a restart, as a deployment's would be.
    NODE_COMPILE_CACHE: join(dir, 'compile-cache'),
  });
  try {
    const idle = await phase(env('idle.sqlite'), api, idleMs, 'idle');
    const path = join(dir, 'jobs.sqlite');
    await (await openSqliteStore(path)).close(); // the migrations; the seed writes the schema
    const jobs = seedPlan(Date.now());
    await seedJobs({ kind: 'sqlite', path }, jobs);
    for (const j of jobs) api.setJob(j.jobId, {});
    const loaded = await phase(env('jobs.sqlite'), api, jobsMs, `${JOBS / 1000}k jobs`);
    return result(idle, loaded, jobsMs);
  } finally {
    await slack.close();
    await api.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

function result(idle: Phase, loaded: Phase, jobsMs: number): BenchResult {
  const k = `${JOBS / 1000}k jobs`;
  const metrics: Metric[] = [
    { name: 'idle: rss', unit: 'MB', runs: idle.rss, target: `≤ ${TARGET.idleMb} MB` },
    { name: `${k}: rss`, unit: 'MB', runs: loaded.rss, target: `≤ ${TARGET.jobsMb} MB` },
    { name: `${k}: GETs/s answered`, unit: '/s', runs: [loaded.gets / (jobsMs / 1000)] },
    {
      name: `${k}: CPU of the bot process`,
      unit: '%',
      runs: [(100 * loaded.cpuS) / (jobsMs / 1000)],
    },
  ];
  for (const [label, p] of [
    ['idle', idle],
    [`${k} (end)`, loaded],
  ] as const)
    metrics.push(
      { name: `${label}: node and libraries (file-backed)`, unit: 'MB', runs: [p.fileMb] },
      { name: `${label}: V8 heap committed`, unit: 'MB', runs: [p.heapTotalMb] },
      { name: `${label}: V8 heap used`, unit: 'MB', runs: [p.heapMb] },
      { name: `${label}: other anonymous (malloc, buffers)`, unit: 'MB', runs: [p.otherMb] },
    );
  return {
    name: 'memory',
    runsMs: [idle.wallMs, loaded.wallMs],
    peakRssMb: Math.max(...loaded.rss),
    peakHeapMb: Math.max(idle.heapMb, loaded.heapMb),
    notes: [
      '`npm start` as is (prestart, start script), SQLite, HTTP mode; VmRSS of the bot node process (not npm) every ' +
        `${SAMPLE_MS} ms, from ${SETTLE_MS / 1000} s after /healthz answered`,
      `rss rows: min / median / max of the samples; ${k}: ${YOUNG_SHARE * 100} % young (${BASE_MS / 1000} s polls), ` +
        `the rest old (${MAX_MS / 1000} s), seeded before the start; the emulator answers in this process`,
      'peak columns: absolute (the bot process with the jobs), not a Δ',
    ],
    stats: {
      idleMedianMb: median(idle.rss),
      jobsMedianMb: median(loaded.rss),
      jobsPeakMb: Math.max(...loaded.rss),
    },
    metrics,
  };
}
