/**
 * What every benchmark shares: the result shape the runner prints, percentiles, and a
 * memory probe. Nothing here asserts a time.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { GCProfiler } from 'node:v8';
import { createLogger, type Logger } from '../src/log.ts';
import type { LatencyProfile } from '../test/fakes/latency.ts';

export interface BenchOptions {
  /** A smaller version of the benchmark: all of them together in a minute or two. */
  quick: boolean;
  /**
   * The latency the fakes answer with in this run (test/fakes/latency.ts): bench/run.ts runs
   * each benchmark once per profile it lists for it. The child process a benchmark runs in
   * also has the profile's name in BENCH_LATENCY, for processes it starts itself.
   */
  latency: LatencyProfile;
}

/** A figure measured once per run; the summary prints its min / median / max. */
export interface Metric {
  name: string;
  unit: string;
  runs: number[];
  /** The target it is held to, as text (`≤ 1.5×`, `< 150 MB`); printed, never asserted. */
  target?: string;
}

export interface BenchResult {
  name: string;
  /** The profile it ran at; set by bench/run.ts. */
  latency?: LatencyProfile['name'];
  /** Wall time of each measured run, in order. */
  runsMs: number[];
  /** Largest rise over the post-GC baseline seen in any measured run. */
  peakRssMb: number;
  peakHeapMb: number;
  notes: string[];
  /** Named numbers for the summary's ratios and per-step lines. */
  stats: Record<string, number>;
  /** Figures measured over several runs, printed as min / median / max. */
  metrics?: Metric[];
}

/** The p-th percentile (0–100) of `xs`, nearest rank. */
export function percentile(xs: readonly number[], p: number): number {
  if (xs.length === 0) return Number.NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))]!;
}

export const MB = 1024 * 1024;

/** The made-up credentials every benchmark's bot and fakes agree on. */
export const SECRETS = {
  botToken: 'xoxb-bench-bot-token-0000000001',
  appToken: 'xapp-1-bench-app-token-000001',
  signingSecret: 'bench-signing-secret-0123456789abcdef',
  apiKey: 'mint_bench_admin_key_0123456789',
} as const;
export const PROJECT = 'proj_bench';

export function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

export function collectGarbage(): void {
  if (!globalThis.gc) throw new Error('Run with node --expose-gc (npm run bench does).');
  globalThis.gc();
}

export interface MemoryPeak {
  /** MB above the baseline. */
  rss: number;
  heap: number;
  gcCount: number;
  gcMs: number;
}

/**
 * Peak rss and heapUsed above a baseline taken right after a full GC. A timer samples every
 * 5 ms while the event loop is free; synchronous code never yields to it, so such code calls
 * `sample()` at its own checkpoints. The heap used just before each GC (v8 GCProfiler) is
 * counted too, which catches transient garbage inside synchronous code; rss has no such
 * hook, so native allocations between checkpoints can be missed.
 */
export function startMemoryProbe(): { sample: () => void; stop: () => MemoryPeak } {
  collectGarbage();
  const base = process.memoryUsage();
  let rss = base.rss;
  let heap = base.heapUsed;
  const sample = () => {
    const m = process.memoryUsage();
    if (m.rss > rss) rss = m.rss;
    if (m.heapUsed > heap) heap = m.heapUsed;
  };
  const gcs = new GCProfiler();
  gcs.start();
  const timer = setInterval(sample, 5);
  return {
    sample,
    stop: () => {
      clearInterval(timer);
      sample();
      const { statistics } = gcs.stop();
      let gcMicros = 0;
      for (const g of statistics) {
        heap = Math.max(heap, g.beforeGC.heapStatistics.usedHeapSize);
        gcMicros += g.cost;
      }
      return {
        rss: (rss - base.rss) / MB,
        heap: (heap - base.heapUsed) / MB,
        gcCount: statistics.length,
        gcMs: gcMicros / 1000,
      };
    },
  };
}

export function silentLogger(): Logger {
  return createLogger({ level: 'silent', secrets: [], destination: { write: () => {} } });
}

export const log = (line: string) => process.stderr.write(`  ${line}\n`);

/**
 * The node flags `npm start` runs the bot with (package.json's start script, V8 heap
 * settings): every benchmark that starts the bot as a process passes them too.
 */
export function botNodeFlags(): string[] {
  const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
    scripts: { start: string };
  };
  return pkg.scripts.start
    .split(/\s+/)
    .filter((t) => t.startsWith('--') && !t.startsWith('--env-file'));
}

/**
 * The entry point `npm start` runs (dist/main.js), built first when it is stale, as npm
 * start's prestart would: a benchmark that starts the bot as `node <flags> <entry>` runs the
 * same code, and the build stays out of what it times.
 */
export function botEntry(): string {
  const root = fileURLToPath(new URL('..', import.meta.url));
  const build = spawnSync(process.execPath, ['scripts/build.mjs', '--if-stale'], { cwd: root });
  if (build.status !== 0) throw new Error(`npm run build failed:\n${build.stderr}`);
  const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
    scripts: { start: string };
  };
  const entry = /\S+\.js\b/.exec(pkg.scripts.start)?.[0];
  if (!entry) throw new Error(`no entry point in the start script: ${pkg.scripts.start}`);
  return entry;
}

/**
 * `BENCH_BOT_ENV=START_CONCURRENCY=4,MALLOC_ARENA_MAX=1` adds settings to the environment of
 * the bot a benchmark starts (the ack and memory benchmarks), for experiments.
 */
export function benchBotEnv(): Record<string, string> {
  const pairs = (process.env.BENCH_BOT_ENV ?? '').split(',').filter((p) => p.includes('='));
  return Object.fromEntries(
    pairs.map((p) => [p.slice(0, p.indexOf('=')), p.slice(p.indexOf('=') + 1)]),
  );
}
