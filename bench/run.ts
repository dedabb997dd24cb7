/**
 * `npm run bench`: runs every benchmark, each in a fresh child process (so one benchmark's
 * heap growth is not another's baseline), once per latency profile it lists, then prints a
 * summary per profile ("latency: zero", then "latency: realistic (Slack 100 ms, create 1 s,
 * GET 150 ms)") and the ratios.
 *
 * `npm run bench -- --quick` runs a smaller version of each (a minute or two in all);
 * `npm run bench -- --only <name>` runs one benchmark in this process, at each of its
 * profiles; `--latency zero|realistic` runs only that profile.
 *
 * Latency (test/fakes/latency.ts): a benchmark gets its profile as `o.latency` and applies
 * it to the fakes it starts (`useLatency(o.latency)` on FakeSlack, the API emulator and
 * FakeSocketMode). Its child process also has the profile's name in the environment as
 * BENCH_LATENCY (`latencyProfile(process.env.BENCH_LATENCY)`), for processes it forks
 * itself, e.g. fakes of its own. A benchmark runs at the profiles listed for it below.
 */
import { fork } from 'node:child_process';
import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { LATENCY_PROFILES, type LatencyName, latencyProfile } from '../test/fakes/latency.ts';
import { benchAck } from './ack/index.ts';
import { benchBurst } from './burst.ts';
import { benchColdStart } from './coldstart.ts';
import { benchFairness } from './fairness.ts';
import { benchFollowUp } from './followup.ts';
import { type BenchOptions, type BenchResult, median } from './measure.ts';
import { benchMemory } from './memory.ts';
import { benchNotifier } from './notifier.ts';
import { benchPoller } from './poller.ts';
import { benchAggregate, benchEndToEnd } from './report.ts';

interface Bench {
  run: (o: BenchOptions) => Promise<BenchResult>;
  latencies: readonly LatencyName[];
  /** Why it does not run at every profile, printed under the profiles it skips. */
  why?: string;
}

const BOTH = ['zero', 'realistic'] as const;
const BENCHES: Record<string, Bench> = {
  ack: { run: benchAck, latencies: BOTH },
  followup: { run: benchFollowUp, latencies: BOTH },
  burst: { run: benchBurst, latencies: BOTH },
  // Runs its own list of API latencies, 0, 5, 50 and 150 ms (bench/poller.ts), in one pass.
  poller: { run: benchPoller, latencies: ['zero'], why: 'runs GETs at 0, 5, 50 and 150 ms itself' },
  notifier: { run: benchNotifier, latencies: BOTH },
  // Two `npm start` replicas in distributed mode: `--workspaces N --jobs M` (default 50 × 200),
  // `--fresh` (every busy job polled every 5 s), `--runs R`: see bench/fairness.ts.
  fairness: { run: benchFairness, latencies: BOTH },
  coldstart: { run: benchColdStart, latencies: BOTH },
  memory: { run: benchMemory, latencies: BOTH },
  'report.end-to-end': { run: benchEndToEnd, latencies: BOTH },
  'report.aggregate': {
    run: (o) => benchAggregate(o.quick ? 2 : 5),
    latencies: ['zero'],
    why: 'no I/O: the same at any latency',
  },
};

const quick = process.argv.includes('--quick');
const latencyArg = process.argv[process.argv.indexOf('--latency') + 1];
const onlyLatency = process.argv.includes('--latency')
  ? latencyProfile(latencyArg ?? '').name
  : undefined;

function runInChild(name: string, latency: LatencyName): Promise<BenchResult> {
  return new Promise((resolve, reject) => {
    const child = fork(
      fileURLToPath(import.meta.url),
      ['--only', name, '--latency', latency, ...(quick ? ['--quick'] : [])],
      {
        execArgv: [...process.execArgv.filter((a) => a !== '--expose-gc'), '--expose-gc'],
        env: { ...process.env, BENCH_LATENCY: latency },
      },
    );
    let result: BenchResult | undefined;
    child.on('message', (m) => {
      result = m as BenchResult;
    });
    child.on('error', reject);
    child.on('exit', (code, signal) => {
      if (result && code === 0) resolve(result);
      else reject(new Error(`${name} (latency ${latency}) failed (exit ${signal ?? code})`));
    });
  });
}

function table(rows: string[][]): string {
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => r[c]!.length)));
  const line = (r: string[]) =>
    r
      .map((cell, c) =>
        c === 0 || c === r.length - 1 ? cell.padEnd(widths[c]!) : cell.padStart(widths[c]!),
      )
      .join('  ')
      .trimEnd();
  const rule = widths.map((w) => '-'.repeat(w)).join('  ');
  return [line(rows[0]!), rule, ...rows.slice(1).map(line)].join('\n');
}

function fmt(x: number): string {
  return Math.abs(x) >= 100 ? x.toFixed(0) : Math.abs(x) >= 10 ? x.toFixed(1) : x.toFixed(2);
}

function summary(results: BenchResult[]): string {
  const head = ['name', 'median ms', 'min/max ms', 'peak rss Δ MB', 'peak heap Δ MB', 'notes'];
  const body: string[][] = [];
  for (const r of results) {
    const [first = '', ...rest] = r.notes;
    body.push([
      r.name,
      median(r.runsMs).toFixed(1),
      `${Math.min(...r.runsMs).toFixed(1)}/${Math.max(...r.runsMs).toFixed(1)}`,
      r.peakRssMb.toFixed(1),
      r.peakHeapMb.toFixed(1),
      first,
    ]);
    for (const note of rest) body.push(['', '', '', '', '', note]);
  }
  const out = [table([head, ...body])];

  // Benchmarks that measure named figures over several runs: min / median / max of each.
  const measured = results.filter((r) => r.metrics?.length);
  if (measured.length) {
    const mHead = ['benchmark', 'figure', 'min', 'median', 'max', 'unit', 'target'];
    const mBody: string[][] = [];
    for (const r of measured)
      for (const m of r.metrics ?? [])
        mBody.push([
          r.name,
          m.name,
          fmt(Math.min(...m.runs)),
          fmt(median(m.runs)),
          fmt(Math.max(...m.runs)),
          m.unit,
          m.target ?? '',
        ]);
    out.push('', table([mHead, ...mBody]));
  }

  const e2e = results.find((r) => r.name === 'report.end-to-end');
  const agg = results.find((r) => r.name === 'report.aggregate');
  if (agg) {
    const s = agg.stats;
    const ms = (k: string) => s[k] ?? 0;
    const rowsIn = ms('inputRows');
    const scaling = ms('step.dedupe') + ms('step.movers') + ms('step.csv') + ms('step.blocks');
    out.push(
      '',
      `report.aggregate steps (median ms): dedupeAndSort ×2 + Map ${ms('step.dedupe').toFixed(1)}, ` +
        `movers ${ms('step.movers').toFixed(1)}, pagesCsv ${ms('step.csv').toFixed(1)}, ` +
        `reportMessage ${ms('step.blocks').toFixed(2)}, renderVisitorsChart ${ms('step.chart').toFixed(1)}`,
      `per-row cost: ${((ms('medianMs') * 1000) / rowsIn).toFixed(2)} µs/row overall, ` +
        `${((scaling * 1000) / rowsIn).toFixed(2)} µs/row without the chart (fixed cost, 7 points); ` +
        `${rowsIn} input rows`,
    );
    if (e2e) {
      const e = e2e.stats.medianMs ?? 0;
      const ratio = (x: number) => `${(x / e).toFixed(3)} (${((100 * x) / e).toFixed(1)}%)`;
      const inBuild = ms('step.dedupe') + ms('step.movers');
      const e2eRows = (e2e.stats.rows ?? 0) + (e2e.stats.previousRows ?? 0);
      const scaled = (inBuild * e2eRows) / rowsIn;
      out.push(
        `ratio aggregate / end-to-end: ${ratio(ms('medianMs'))}`,
        `ratio (dedupe + movers, the part inside service.build) / end-to-end: ${ratio(inBuild)}`,
        `  scaled linearly to end-to-end's ${e2eRows} rows: ~${scaled.toFixed(0)} ms, ${ratio(scaled)}`,
        `end-to-end minus the emulator's traffic model: ~${(e - (e2e.stats.emulatorModelMs ?? 0)).toFixed(0)} ms; ` +
          `the model is ${ratio(e2e.stats.emulatorModelMs ?? 0)}`,
      );
    }
  }
  return out.join('\n');
}

/** One table set per profile, each under its label; benchmarks it skips are named. */
function summaries(results: BenchResult[], names: string[]): string {
  const out: string[] = [];
  for (const latency of Object.keys(LATENCY_PROFILES) as LatencyName[]) {
    if (onlyLatency && latency !== onlyLatency) continue;
    const at = results.filter((r) => r.latency === latency);
    const skipped = names
      .filter((n) => !BENCHES[n]!.latencies.includes(latency))
      .map((n) => `${n} (${BENCHES[n]!.why ?? 'not listed'})`);
    if (at.length === 0 && skipped.length === 0) continue;
    const rule = '='.repeat(LATENCY_PROFILES[latency].label.length + 6);
    out.push(rule, `== ${LATENCY_PROFILES[latency].label} ==`, rule);
    if (at.length) out.push(summary(at));
    if (skipped.length) out.push(`not run at this latency: ${skipped.join('; ')}`);
    out.push('');
  }
  return out.join('\n');
}

function profilesOf(name: string): LatencyName[] {
  return BENCHES[name]!.latencies.filter((l) => !onlyLatency || l === onlyLatency);
}

const onlyAt = process.argv.indexOf('--only');
if (onlyAt >= 0) {
  const name = process.argv[onlyAt + 1] ?? '';
  const bench = BENCHES[name];
  if (!bench)
    throw new Error(`unknown benchmark ${name}; known: ${Object.keys(BENCHES).join(', ')}`);
  const results: BenchResult[] = [];
  for (const latency of profilesOf(name)) {
    process.env.BENCH_LATENCY = latency;
    const result = await bench.run({ quick, latency: latencyProfile(latency) });
    results.push({ ...result, latency });
  }
  if (process.send && results.length === 1) process.send(results[0], () => process.disconnect());
  else console.log(summaries(results, [name]));
} else {
  const started = performance.now();
  const results: BenchResult[] = [];
  for (const name of Object.keys(BENCHES)) {
    for (const latency of profilesOf(name)) {
      process.stderr.write(`${name} (latency: ${latency})\n`);
      results.push({ ...(await runInChild(name, latency)), latency });
    }
  }
  console.log(`\n${summaries(results, Object.keys(BENCHES))}`);
  console.log(
    `node ${process.version}, ${process.platform}/${process.arch}, ${availableParallelism()} cores` +
      `${quick ? ' (--quick)' : ''}; ` +
      `whole run ${((performance.now() - started) / 1000).toFixed(1)} s`,
  );
}
