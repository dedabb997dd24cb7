/**
 * Benchmarks of the docs-traffic report at 50,000 pages: the whole build against the API
 * emulator (HTTP, zod, SQLite and all), and the pure arithmetic and rendering on rows held in
 * memory. They print numbers; nothing here asserts a time.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ApiClient } from '../src/api/client.ts';
import type { PageRow } from '../src/api/schemas.ts';
import { DEFAULT_MOVERS, dedupeAndSort, movers, totalsChange } from '../src/reports/aggregate.ts';
import { renderVisitorsChart } from '../src/reports/chart.ts';
import { pagesCsv } from '../src/reports/csv.ts';
import { CORE_REQUESTS, PAGE_LIMIT } from '../src/reports/limits.ts';
import {
  chartBuckets,
  type DateRange,
  formatRange,
  parseVisitorsArgs,
  previousRange,
} from '../src/reports/range.ts';
import { createReportService, type Report } from '../src/reports/service.ts';
import { reportDetails, reportHeadline } from '../src/slack/report-blocks.ts';
import { openSqliteStore } from '../src/store/sqlite.ts';
import { ApiEmulator } from '../test/fakes/api-emulator.ts';
import {
  type BenchOptions,
  type BenchResult,
  log,
  MB,
  median,
  silentLogger,
  startMemoryProbe,
} from './measure.ts';

const PATHS = 50_000;
/** Thursday 2026-11-19 12:00 UTC: the default range is the 7 closed days before it. */
const NOW = Date.UTC(2026, 10, 19, 12);
const TIME_ZONE = 'UTC';
const TITLE = 'Docs traffic';

// ---- 1. end to end ----

/**
 * `service.build` for the default 7-day range against an emulated site of 50,000 paths:
 * every page of both periods, 7 chart points, a fresh service (empty report cache) and a
 * fresh SQLite file (empty point cache) per run. The emulator serves from this process, so
 * its JSON encoding and per-range model are part of the time. At realistic latency every
 * analytics read takes 150 ms ± 20 %; the quick run then builds a site of 10,000 paths
 * (the pages are read one after another: 50,000 paths take about a minute).
 */
export async function benchEndToEnd(o: BenchOptions): Promise<BenchResult> {
  const realistic = o.latency.name === 'realistic';
  const runs = o.quick ? 1 : realistic ? 2 : 3;
  const paths = o.quick && realistic ? PATHS / 5 : PATHS;
  const apiKey = 'mint_bench_key_000000';
  const projectId = 'bench-project';
  const api = await ApiEmulator.start({ apiKey, projectId, now: () => NOW });
  api.setSite({ paths });
  api.useLatency(o.latency);
  const logger = silentLogger();
  const client = new ApiClient({ baseUrl: api.url, apiKey, projectId, log: logger });
  const parsed = parseVisitorsArgs('', new Date(NOW), TIME_ZONE);
  if (!parsed.ok) throw new Error(parsed.error);
  const range = parsed.range;
  // Enough for every page of both periods even if every path had a row.
  const maxRequests = CORE_REQUESTS + 2 * Math.ceil(paths / PAGE_LIMIT);
  const dir = mkdtempSync(join(tmpdir(), 'bench-report-'));

  const runsMs: number[] = [];
  let peakRssMb = 0;
  let peakHeapMb = 0;
  const gcMs: number[] = [];
  const modelMs: number[] = [];
  let last: Report | undefined;
  try {
    for (let i = 0; i < runs; i++) {
      const store = await openSqliteStore(join(dir, `run-${i}.sqlite`));
      const service = createReportService({
        api: client,
        store,
        log: logger,
        maxRequests,
        now: () => NOW,
      });
      const before = api.requests.length;
      const probe = startMemoryProbe();
      const started = performance.now();
      const report = await service.build(range);
      const ms = performance.now() - started;
      const mem = probe.stop();
      await store.close();

      const { current, previous, requests, stoppedBy } = report.scan;
      if (!current.complete || !previous.complete || stoppedBy) {
        throw new Error(`scan stopped early (${stoppedBy}) after ${requests} requests`);
      }
      if (api.requests.length - before !== requests) {
        throw new Error(
          `the emulator saw ${api.requests.length - before} requests, not ${requests}`,
        );
      }
      // The emulator's traffic model (one single-entry cache) replayed for the same queries in
      // the order they arrived: the part of `ms` that is the fake's arithmetic, not the bot's.
      const replayStarted = performance.now();
      for (const { query } of api.requests.slice(before)) api.truth(query.dateFrom, query.dateTo);
      modelMs.push(performance.now() - replayStarted);
      runsMs.push(ms);
      peakRssMb = Math.max(peakRssMb, mem.rss);
      peakHeapMb = Math.max(peakHeapMb, mem.heap);
      gcMs.push(mem.gcMs);
      last = report;
      log(
        `report.end-to-end run ${i + 1}/${runs}: ${ms.toFixed(0)} ms, ${requests} requests, ` +
          `rss Δ ${mem.rss.toFixed(1)} MB, heap Δ ${mem.heap.toFixed(1)} MB, ` +
          `${mem.gcCount} GCs ${mem.gcMs.toFixed(1)} ms, emulator model ${modelMs.at(-1)!.toFixed(0)} ms`,
      );
    }
  } finally {
    await api.close();
    rmSync(dir, { recursive: true, force: true });
  }

  const report = last!;
  const med = median(runsMs);
  const { requests } = report.scan;
  const rows = report.rows.length;
  const previousRows = report.previousRows.size;
  return {
    name: 'report.end-to-end',
    runsMs,
    peakRssMb,
    peakHeapMb,
    notes: [
      `${requests} requests (${(med / requests).toFixed(2)} ms each), ${rows} + ${previousRows} rows`,
      `${formatRange(range)}; emulator in-process; fresh service + SQLite file per run`,
      `emulator site: ${paths} paths; a path with no visit in a period has no row`,
      `of which the emulator's traffic model ~${median(modelMs).toFixed(0)} ms ` +
        `(same queries replayed through api.truth)`,
      `GC median ${median(gcMs).toFixed(0)} ms per run (v8 GCProfiler)`,
    ],
    stats: {
      medianMs: med,
      requests,
      rows,
      previousRows,
      gcMs: median(gcMs),
      emulatorModelMs: median(modelMs),
    },
  };
}

// ---- 2. aggregation and rendering only ----

/** Deterministic 32-bit PRNG (mulberry32); returns [0, 1). */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function shuffle<T>(xs: T[], rand: () => number): T[] {
  for (let i = xs.length - 1; i > 0; i--) {
    const j = Math.floor(rand() * (i + 1));
    [xs[i], xs[j]] = [xs[j]!, xs[i]!];
  }
  return xs;
}

function rowFor(path: string, total: number, rand: () => number): PageRow {
  const human = Math.max(0, Math.round(total * (0.5 + 0.4 * rand())));
  const ai = Math.max(0, total - human + Math.floor(Math.min(human, total - human) * 0.2 * rand()));
  return { path, human, ai, total: Math.max(human, ai, total) };
}

/**
 * Two periods of `n` rows each, shuffled, ~1% of rows repeating an earlier path (as offset
 * paging over a shifting order does). Traffic is long-tailed; 90% of the current paths are
 * in the previous period too, with counts moved by up to ±60%, so movers have work to do.
 * One path in 1,000 needs CSV quoting.
 */
export function aggregateInput(n = PATHS, seed = 42): { current: PageRow[]; previous: PageRow[] } {
  const rand = prng(seed);
  const dups = Math.round(n * 0.01);
  const unique = n - dups;
  const pathAt = (i: number) =>
    i % 1000 === 7
      ? `/search/"q=${i}",page`
      : `/guides/section-${String(i % 97).padStart(2, '0')}/page-${String(i).padStart(5, '0')}`;
  const traffic = () => Math.max(1, Math.floor(4000 * rand() ** 8));
  const withDuplicates = (rows: PageRow[]) => {
    for (let i = 0; i < dups; i++) {
      const of = rows[Math.floor(rand() * unique)]!;
      rows.push(rowFor(of.path, traffic(), rand));
    }
    return shuffle(rows, rand);
  };

  const current = Array.from({ length: unique }, (_, i) => rowFor(pathAt(i), traffic(), rand));
  const shared = Math.round(unique * 0.9);
  const previous = [
    ...current
      .slice(0, shared)
      .map((r) => rowFor(r.path, Math.max(1, Math.round(r.total * (0.4 + 1.2 * rand()))), rand)),
    ...Array.from({ length: unique - shared }, (_, i) =>
      rowFor(pathAt(unique + i), traffic(), rand),
    ),
  ];
  return { current: withDuplicates(current), previous: withDuplicates(previous) };
}

const STEPS = ['dedupe', 'movers', 'csv', 'blocks', 'chart'] as const;
type Step = (typeof STEPS)[number];

/**
 * What happens to the rows after the scan: dedupeAndSort both periods, movers (as in
 * `service.build`), then what the poster makes of the report: pagesCsv, reportHeadline, reportDetails and
 * the 7-point chart PNG. Median of `runs` after `warmups` unmeasured runs.
 */
export async function benchAggregate(runs = 5, warmups = 1): Promise<BenchResult> {
  const input = aggregateInput();
  const range: DateRange = { from: '2026-11-12', to: '2026-11-19', days: 7, timeZone: TIME_ZONE };
  const previous = previousRange(range);
  const rand = prng(7);
  const points = chartBuckets(range).map((b) => {
    const human = Math.floor(20_000 + 10_000 * rand());
    const ai = Math.floor(5_000 + 10_000 * rand());
    return { ...b, human, ai, total: human + ai - Math.floor(ai * 0.1) };
  });
  const totals = { human: 150_000, ai: 70_000, total: 205_000 };
  const previousTotals = { human: 140_000, ai: 52_000, total: 185_000 };

  const once = (sample: () => void) => {
    const t: Record<Step, number> = { dedupe: 0, movers: 0, csv: 0, blocks: 0, chart: 0 };
    let at = performance.now();
    const lap = (step: Step) => {
      sample();
      const now = performance.now();
      t[step] = now - at;
      at = now;
    };
    const rows = dedupeAndSort(input.current);
    const previousRows = new Map(dedupeAndSort(input.previous).map((r) => [r.path, r]));
    lap('dedupe');
    const moved = movers(rows, previousRows, {
      ...DEFAULT_MOVERS,
      currentComplete: true,
      previousComplete: true,
    });
    lap('movers');
    const csv = pagesCsv(rows, previousRows, true);
    lap('csv');
    const report: Report = {
      range,
      previous,
      totals,
      previousTotals,
      changes: totalsChange(totals, previousTotals),
      points,
      rows,
      previousRows,
      top: rows.slice(0, 10),
      movers: moved,
      scan: {
        current: { paths: rows.length, complete: true },
        previous: { paths: previousRows.size, complete: true },
        requests: 0,
        stoppedBy: null,
      },
      generatedAt: NOW,
    };
    const message = { headline: reportHeadline(report, TITLE), ...reportDetails(report, TITLE) };
    lap('blocks');
    const period = formatRange(range);
    const chart = renderVisitorsChart(
      points.map((p) => ({ label: p.label, human: p.human, ai: p.ai })),
      { title: `${TITLE}: unique visitors`, subtitle: `${period} · humans vs AI agents` },
    );
    lap('chart');
    return { t, rows: rows.length, prev: previousRows.size, csv, message, chart };
  };

  for (let i = 0; i < warmups; i++) once(() => {});
  const runsMs: number[] = [];
  const steps: Record<Step, number[]> = { dedupe: [], movers: [], csv: [], blocks: [], chart: [] };
  let peakRssMb = 0;
  let peakHeapMb = 0;
  const gcMs: number[] = [];
  let shape = { rows: 0, prev: 0, csvBytes: 0, pngBytes: 0, blocks: 0 };
  for (let i = 0; i < runs; i++) {
    const probe = startMemoryProbe();
    const started = performance.now();
    const out = once(probe.sample);
    const ms = performance.now() - started;
    const mem = probe.stop();
    runsMs.push(ms);
    for (const s of STEPS) steps[s].push(out.t[s]);
    peakRssMb = Math.max(peakRssMb, mem.rss);
    peakHeapMb = Math.max(peakHeapMb, mem.heap);
    gcMs.push(mem.gcMs);
    shape = {
      rows: out.rows,
      prev: out.prev,
      csvBytes: Buffer.byteLength(out.csv),
      pngBytes: out.chart.png.length,
      blocks: out.message.blocks.length,
    };
    log(
      `report.aggregate run ${i + 1}/${runs}: ${ms.toFixed(1)} ms, ` +
        `rss Δ ${mem.rss.toFixed(1)} MB, heap Δ ${mem.heap.toFixed(1)} MB, ` +
        `${mem.gcCount} GCs ${mem.gcMs.toFixed(1)} ms`,
    );
  }

  const inputRows = input.current.length + input.previous.length;
  const med = median(runsMs);
  const stepMedians = Object.fromEntries(STEPS.map((s) => [s, median(steps[s])])) as Record<
    Step,
    number
  >;
  return {
    name: 'report.aggregate',
    runsMs,
    peakRssMb,
    peakHeapMb,
    notes: [
      `${inputRows} rows in (${input.current.length} + ${input.previous.length}, 1% repeats) → ` +
        `${shape.rows} + ${shape.prev} unique`,
      `CSV ${(shape.csvBytes / MB).toFixed(1)} MB, PNG ${(shape.pngBytes / 1024).toFixed(0)} kB, ` +
        `${shape.blocks} blocks`,
      `GC median ${median(gcMs).toFixed(1)} ms per run; sync code: rss sampled between steps only`,
    ],
    stats: {
      medianMs: med,
      gcMs: median(gcMs),
      inputRows,
      ...Object.fromEntries(STEPS.map((s) => [`step.${s}`, stepMedians[s]])),
    },
  };
}
