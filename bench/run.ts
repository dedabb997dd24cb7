/**
 * `npm run bench`: runs every benchmark, each in a fresh child process (so one benchmark's
 * heap growth is not another's baseline), then prints a summary table and ratios.
 *
 * `npm run bench -- --quick` runs a smaller version of each (under a minute in all);
 * `npm run bench -- --only <name>` runs one benchmark in this process.
 */
import { fork } from 'node:child_process';
import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { benchAck } from './ack/index.ts';
import { benchColdStart } from './coldstart.ts';
import { benchFollowUp } from './followup.ts';
import { type BenchOptions, type BenchResult, median } from './measure.ts';
import { benchMemory } from './memory.ts';
import { benchNotifier } from './notifier.ts';
import { benchPoller } from './poller.ts';
import { benchAggregate, benchEndToEnd } from './report.ts';

const BENCHES: Record<string, (o: BenchOptions) => Promise<BenchResult>> = {
  ack: (o) => benchAck(o),
  followup: benchFollowUp,
  poller: benchPoller,
  notifier: benchNotifier,
  coldstart: benchColdStart,
  memory: benchMemory,
  'report.end-to-end': (o) => benchEndToEnd(o.quick ? 1 : 3),
  'report.aggregate': (o) => benchAggregate(o.quick ? 2 : 5),
};

const quick = process.argv.includes('--quick');

function runInChild(name: string): Promise<BenchResult> {
  return new Promise((resolve, reject) => {
    const child = fork(
      fileURLToPath(import.meta.url),
      ['--only', name, ...(quick ? ['--quick'] : [])],
      {
        execArgv: [...process.execArgv.filter((a) => a !== '--expose-gc'), '--expose-gc'],
      },
    );
    let result: BenchResult | undefined;
    child.on('message', (m) => {
      result = m as BenchResult;
    });
    child.on('error', reject);
    child.on('exit', (code, signal) => {
      if (result && code === 0) resolve(result);
      else reject(new Error(`${name} failed (exit ${signal ?? code})`));
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

const onlyAt = process.argv.indexOf('--only');
if (onlyAt >= 0) {
  const name = process.argv[onlyAt + 1] ?? '';
  const bench = BENCHES[name];
  if (!bench)
    throw new Error(`unknown benchmark ${name}; known: ${Object.keys(BENCHES).join(', ')}`);
  const result = await bench({ quick });
  if (process.send) process.send(result, () => process.disconnect());
  else console.log(summary([result]));
} else {
  const started = performance.now();
  const results: BenchResult[] = [];
  for (const name of Object.keys(BENCHES)) {
    process.stderr.write(`${name}\n`);
    results.push(await runInChild(name));
  }
  console.log(`\n${summary(results)}`);
  console.log(
    `\nnode ${process.version}, ${process.platform}/${process.arch}, ${availableParallelism()} cores` +
      `${quick ? ' (--quick)' : ''}; ` +
      `whole run ${((performance.now() - started) / 1000).toFixed(1)} s`,
  );
}
