/**
 * Benchmark of a cold start: the bot spawned as `npm start` runs it (`node dist/main.js`, HTTP
 * mode, a fresh database), timed from the spawn to the first 200 from `GET /healthz`; then its
 * resident memory after idling, and how long SIGTERM takes to end it. Beside it, in the same
 * run, a bare `node -e` HTTP server timed the same way: the floor no bot can beat. FakeSlack
 * and the API emulator serve from this process, at the run's latency profile (start-up's
 * auth.test takes a Slack call's time). It prints numbers; nothing here asserts a time.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ApiEmulator } from '../test/fakes/api-emulator.ts';
import { FakeSlack } from '../test/fakes/slack.ts';
import { freePort, sleep } from '../test/helpers/net.ts';
import {
  type BenchOptions,
  type BenchResult,
  botEntry,
  botNodeFlags,
  log,
  MB,
  type Metric,
  median,
  PROJECT,
  SECRETS,
} from './measure.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const TARGET_MS = 1_500;
const POLL_MS = 10;
const IDLE_MS = 2_000;
/** Far above any start seen here: a bot that has not answered by then is a failure. */
const START_TIMEOUT_MS = 20_000;
const BASELINE_SERVER =
  "require('node:http').createServer((q, s) => s.end('ok')).listen(Number(process.env.PORT), '127.0.0.1')";

/** Children still running: killed if this process goes away first, so none is left behind. */
const live = new Set<ChildProcess>();
process.on('exit', () => {
  for (const child of live) child.kill('SIGKILL');
});

interface Started {
  child: ChildProcess;
  exited: Promise<number | null>;
  output: () => string;
  /** Spawn → first 200 on the probed path. */
  readyMs: number;
  /** CPU time (all threads, user + system) the child had used by then. */
  cpuMs: number;
}

/** Spawns `node args…` and polls `http://127.0.0.1:port/path` every POLL_MS until it answers 200. */
async function spawnAndWait(
  args: string[],
  env: Record<string, string>,
  port: number,
  path: string,
): Promise<Started> {
  const chunks: string[] = [];
  const started = performance.now();
  const child = spawn(process.execPath, args, {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  live.add(child);
  const exited = once(child, 'exit').then(([code]) => {
    live.delete(child);
    return code as number | null;
  });
  child.stdout?.on('data', (c) => chunks.push(String(c)));
  child.stderr?.on('data', (c) => chunks.push(String(c)));
  const output = () => chunks.join('');
  let gone = false;
  void exited.then(() => {
    gone = true;
  });
  const url = `http://127.0.0.1:${port}${path}`;
  for (;;) {
    const attempt = performance.now();
    try {
      const res = await fetch(url, { signal: AbortSignal.timeout(1_000) });
      const readyMs = performance.now() - started;
      await res.arrayBuffer();
      if (res.status === 200) return { child, exited, output, readyMs, cpuMs: cpuMs(child.pid!) };
    } catch {} // not listening yet
    if (gone) throw new Error(`exited before ${path} answered:\n${output().slice(-2_000)}`);
    if (performance.now() - started > START_TIMEOUT_MS) {
      child.kill('SIGKILL');
      await exited;
      throw new Error(`${path} did not answer within ${START_TIMEOUT_MS} ms`);
    }
    await sleep(Math.max(0, POLL_MS - (performance.now() - attempt)));
  }
}

/** Resident set size from the kernel (VmRSS), in MB. */
function rssMb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = /^VmRSS:\s+(\d+) kB$/m.exec(status)?.[1];
  if (!kb) throw new Error(`no VmRSS for ${pid}`);
  return (Number(kb) * 1024) / MB;
}

/**
 * utime + stime from /proc/<pid>/stat, in clock ticks of 10 ms (USER_HZ is 100 on Linux): a
 * figure that other load on the machine moves much less than the wall time.
 */
function cpuMs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

/** SIGTERM, then the time to exit; SIGKILL if it does not within 15 s. */
async function terminate(s: Started): Promise<{ ms: number; code: number | null }> {
  const t0 = performance.now();
  s.child.kill('SIGTERM');
  const timer = setTimeout(() => s.child.kill('SIGKILL'), 15_000);
  const code = await s.exited.finally(() => clearTimeout(timer));
  return { ms: performance.now() - t0, code };
}

interface BaselineRun {
  readyMs: number;
  cpuMs: number;
  rssMb: number;
}

interface BotRun {
  readyMs: number;
  cpuMs: number;
  /** Spawn → the bot's own `bot.started` log line (its clock, same machine). */
  startedLogMs: number;
  rssMb: number;
  /** nodejs_heap_size_used_bytes from its /metrics, read after the rss. */
  heapUsedMb: number;
  stopMs: number;
}

async function botRun(env: Record<string, string>, idleMs = IDLE_MS): Promise<BotRun> {
  const port = await freePort();
  const spawnedAt = Date.now();
  const s = await spawnAndWait(
    [...botNodeFlags(), botEntry()],
    { ...env, PORT: String(port) },
    port,
    '/healthz',
  );
  try {
    await sleep(idleMs);
    const rss = rssMb(s.child.pid!);
    const metrics = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
    const heapUsed = /^nodejs_heap_size_used_bytes (\S+)$/m.exec(metrics)?.[1];
    const { ms: stopMs, code } = await terminate(s);
    if (code !== 0)
      throw new Error(`the bot exited ${code} on SIGTERM:\n${s.output().slice(-2_000)}`);
    const started = /"time":"([^"]+)"[^\n]*"msg":"bot\.started"/.exec(s.output())?.[1];
    if (!started) throw new Error(`no bot.started line:\n${s.output().slice(-2_000)}`);
    return {
      readyMs: s.readyMs,
      cpuMs: s.cpuMs,
      startedLogMs: Date.parse(started) - spawnedAt,
      rssMb: rss,
      heapUsedMb: Number(heapUsed) / MB,
      stopMs,
    };
  } finally {
    // On a failure above: nothing may outlive the run, nor hold its database open.
    if (s.child.exitCode === null && s.child.signalCode === null) {
      s.child.kill('SIGKILL');
      await s.exited;
    }
  }
}

async function baselineRun(): Promise<BaselineRun> {
  const port = await freePort();
  const s = await spawnAndWait(['-e', BASELINE_SERVER], { PORT: String(port) }, port, '/');
  try {
    return { readyMs: s.readyMs, cpuMs: s.cpuMs, rssMb: rssMb(s.child.pid!) };
  } finally {
    s.child.kill('SIGKILL');
    await s.exited;
  }
}

type Env = (databaseUrl: string, extra?: Record<string, string>) => Record<string, string>;

export async function benchColdStart(o: BenchOptions): Promise<BenchResult> {
  const runs = o.quick ? 3 : 6;
  const slack = await FakeSlack.start();
  const api = await ApiEmulator.start({ apiKey: SECRETS.apiKey, projectId: PROJECT });
  slack.useLatency(o.latency); // auth.test at start-up takes a Slack call's time
  api.useLatency(o.latency);
  const dir = mkdtempSync(join(tmpdir(), 'bench-coldstart-'));
  const env: Env = (databaseUrl, extra = {}) => ({
    SLACK_BOT_TOKEN: SECRETS.botToken,
    SLACK_SIGNING_SECRET: SECRETS.signingSecret,
    SLACK_API_URL: slack.url,
    MINTLIFY_API_KEY: SECRETS.apiKey,
    MINTLIFY_PROJECT_ID: PROJECT,
    MINTLIFY_API_URL: api.url,
    DATABASE_URL: databaseUrl,
    ...extra,
  });
  try {
    const { bot, base } = await sideBySide(runs, env, dir, !o.quick);
    // The extras are what the full run adds: one start on PostgreSQL, and restarts, which find
    // Node's compile cache (turned on by main.ts) already filled.
    const postgres = o.quick ? undefined : await postgresRun(env, dir);
    const cached = o.quick ? [] : await compileCacheRuns(3, env, dir);
    return result({ runs, bot, base, postgres, cached, quick: o.quick });
  } finally {
    await slack.close();
    await api.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * Each run a bare node start, then a bot start on a fresh SQLite file. Unmeasured starts
 * first bring node, the sources and the modules into the page cache (the bot's only when
 * `warmBot`: it takes a second and a half the quick run does not have).
 */
async function sideBySide(
  runs: number,
  env: Env,
  dir: string,
  warmBot: boolean,
): Promise<{ bot: BotRun[]; base: BaselineRun[] }> {
  await baselineRun();
  // Each start gets an empty compile cache of its own: the first start after a deploy.
  const fresh = (name: string) => ({ NODE_COMPILE_CACHE: join(dir, name, 'compile-cache') });
  if (warmBot)
    await botRun(env(`sqlite:${join(dir, 'warm-up', 'bot.sqlite')}`, fresh('warm-up')), 0);
  const bot: BotRun[] = [];
  const base: BaselineRun[] = [];
  for (let i = 0; i < runs; i++) {
    const b = await baselineRun();
    const r = await botRun(env(`sqlite:${join(dir, `run-${i}`, 'bot.sqlite')}`, fresh(`run-${i}`)));
    base.push(b);
    bot.push(r);
    log(
      `coldstart run ${i + 1}/${runs}: ${describe(r)}; ` +
        `bare node -e server ${b.readyMs.toFixed(0)} ms (${b.cpuMs} ms CPU), ${b.rssMb.toFixed(1)} MB`,
    );
  }
  return { bot, base };
}

function describe(r: BotRun): string {
  return (
    `/healthz 200 after ${r.readyMs.toFixed(0)} ms (bot.started logged at ${r.startedLogMs} ms, ` +
    `${r.cpuMs} ms CPU), ` +
    `idle rss ${r.rssMb.toFixed(1)} MB (heap used ${r.heapUsedMb.toFixed(1)} MB), ` +
    `SIGTERM → exit ${r.stopMs.toFixed(0)} ms`
  );
}

/** One start on a fresh PostgreSQL database, when a server answers; undefined otherwise. */
async function postgresRun(env: Env, dir: string): Promise<BotRun | undefined> {
  const pg = await import('../test/helpers/postgres.ts');
  if (!pg.postgresAvailable) return undefined;
  const database = await pg.createTestDatabase();
  try {
    const r = await botRun(env(database.url, { NODE_COMPILE_CACHE: join(dir, 'pg', 'cache') }));
    log(`coldstart postgres: ${describe(r)}`);
    return r;
  } finally {
    await database.drop();
  }
}

/** Starts with NODE_COMPILE_CACHE in a directory the first, unmeasured start fills. */
async function compileCacheRuns(runs: number, env: Env, dir: string): Promise<BotRun[]> {
  const extra = { NODE_COMPILE_CACHE: join(dir, 'compile-cache') };
  await botRun(env(`sqlite:${join(dir, 'cache-warm-up', 'bot.sqlite')}`, extra), 0);
  const out: BotRun[] = [];
  for (let i = 0; i < runs; i++) {
    const r = await botRun(env(`sqlite:${join(dir, `cached-${i}`, 'bot.sqlite')}`, extra));
    out.push(r);
    log(`coldstart compile cache ${i + 1}/${runs}: ${describe(r)}`);
  }
  return out;
}

function result(r: {
  runs: number;
  bot: BotRun[];
  base: BaselineRun[];
  postgres: BotRun | undefined;
  cached: BotRun[];
  quick: boolean;
}): BenchResult {
  const { bot, base, postgres, cached } = r;
  const ready = bot.map((b) => b.readyMs);
  const metrics: Metric[] = [
    { name: 'spawn → /healthz 200', unit: 'ms', runs: ready, target: `< ${TARGET_MS} ms` },
    { name: 'bare node -e server', unit: 'ms', runs: base.map((b) => b.readyMs) },
    {
      name: 'ratio bot / bare node',
      unit: '×',
      runs: bot.map((b, i) => b.readyMs / base[i]!.readyMs),
    },
    { name: 'spawn → bot.started log', unit: 'ms', runs: bot.map((b) => b.startedLogMs) },
    { name: 'CPU time to /healthz 200', unit: 'ms', runs: bot.map((b) => b.cpuMs) },
    { name: 'bare node CPU time', unit: 'ms', runs: base.map((b) => b.cpuMs) },
    { name: 'idle rss (after 2 s)', unit: 'MB', runs: bot.map((b) => b.rssMb) },
    { name: 'idle heap used', unit: 'MB', runs: bot.map((b) => b.heapUsedMb) },
    { name: 'bare node rss', unit: 'MB', runs: base.map((b) => b.rssMb) },
    { name: 'SIGTERM → exit', unit: 'ms', runs: bot.map((b) => b.stopMs) },
  ];
  if (postgres)
    metrics.push(
      { name: 'postgres: spawn → /healthz 200', unit: 'ms', runs: [postgres.readyMs] },
      { name: 'postgres: idle rss', unit: 'MB', runs: [postgres.rssMb] },
    );
  if (cached.length)
    metrics.push(
      {
        name: 'restart (compile cache filled): spawn → /healthz',
        unit: 'ms',
        runs: cached.map((b) => b.readyMs),
      },
      { name: 'restart: CPU time', unit: 'ms', runs: cached.map((b) => b.cpuMs) },
      { name: 'restart: idle rss', unit: 'MB', runs: cached.map((b) => b.rssMb) },
    );
  return {
    name: 'coldstart',
    runsMs: ready,
    peakRssMb: Math.max(...bot.map((b) => b.rssMb)),
    peakHeapMb: Math.max(...bot.map((b) => b.heapUsedMb)),
    notes: [
      `${r.runs} runs after unmeasured warm-ups (${r.quick ? 'bare node only' : 'bare node and bot'}); ` +
        'HTTP mode, LOG_LEVEL info to a pipe, ' +
        `a fresh SQLite file per run; /healthz polled every ${POLL_MS} ms`,
      'peak columns: the idle bot process, absolute (VmRSS; heap used from /metrics), not a Δ',
      r.quick
        ? 'postgres and compile-cache runs: full run only'
        : postgres
          ? 'postgres: one run on a database created for it and dropped after'
          : 'postgres: skipped (no server)',
    ],
    stats: { medianMs: median(ready) },
    metrics,
  };
}
