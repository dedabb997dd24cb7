/**
 * Benchmark 3: the poller at 1,000 and 10,000 active jobs, on SQLite and PostgreSQL, with the
 * real ApiClient over HTTP to the API emulator (at 10,000 jobs: GETs answered at once, and in
 * 5, 50 and 150 ms, the last the real API's figure), the real notifier and
 * the fake Slack, so "status change → post" is measured end to end. Three processes: this one
 * seeds and reads the figures; the bot's side (bench/poller-bot.ts, one per scenario, so
 * its RSS and event-loop delay are its own) and the fakes (bench/poller-fakes.ts).
 *
 * Jobs are seeded as the bot leaves them: a tenth young (started in the last 20 s, on the
 * first delay), the rest old (10–60 min, backed off to the ceiling, due at moments spread
 * over it, as jitter leaves them). We cannot wait an hour: the rates are measured over a
 * window cut into slices (each slice is a run of the summary) and scaled to a job-hour.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openPostgresStore } from '../src/store/postgres.ts';
import { openSqliteStore } from '../src/store/sqlite.ts';
import { createTestDatabase, postgresAvailable } from '../test/helpers/postgres.ts';
import {
  type BenchOptions,
  type BenchResult,
  botNodeFlags,
  log,
  type Metric,
  median,
  percentile,
  silentLogger,
} from './measure.ts';
import type { BotSettings } from './poller-bot.ts';
import {
  type BotReport,
  type Child,
  type Completion,
  forkChild,
  type GetSeen,
  NAIVE_INTERVAL_MS,
  type Slice,
  sleep,
} from './poller-ipc.ts';
import { duePlans, type Place, type SeedJob, seedJobs, shiftTimes } from './poller-world.ts';

const BASE_MS = 5_000;
const MAX_MS = 60_000;
const LEASE_MS = 30_000;
/** The GET latencies tried at 10,000 jobs (`--quick`: the first and the last). */
const LATENCIES_MS = [0, 5, 50, 150];
/** PostgreSQL, slower to run, at these only. */
const POSTGRES_LATENCIES_MS = [5, 150];
const YOUNG_SHARE = 0.1;
const HOUR_MS = 3_600_000;
/** Polling starts this long before the window: a running bot, not one just restarted. */
const WARM_MS = 5_000;

interface Scenario {
  engine: 'sqlite' | 'postgres';
  jobs: number;
  /** How long the emulator takes to answer a GET. */
  latencyMs: number;
  windowMs: number;
  slices: number;
  completions: number;
  naive: number;
}

export async function benchPoller(o: BenchOptions): Promise<BenchResult> {
  const engines = postgresAvailable ? (['sqlite', 'postgres'] as const) : (['sqlite'] as const);
  const runs = (engine: Scenario['engine']): [number, number][] => {
    const latencies = engine === 'postgres' ? POSTGRES_LATENCIES_MS : LATENCIES_MS;
    if (o.quick) return engine === 'postgres' ? [] : [0, 150].map((ms) => [10_000, ms]);
    return [[1_000, 5], ...latencies.map((ms): [number, number] => [10_000, ms])];
  };
  const scenarios: Scenario[] = engines.flatMap((engine) =>
    runs(engine).map(([jobs, latencyMs]) => ({
      engine,
      jobs,
      latencyMs,
      windowMs: o.quick ? 6_000 : 20_000,
      slices: o.quick ? 2 : 4,
      completions: o.quick ? 10 : 60,
      naive: o.quick ? 200 : 400,
    })),
  );
  const fakes = forkChild('./poller-fakes.ts');
  const metrics: Metric[] = [];
  const notes: string[] = [];
  const runsMs: number[] = [];
  let peakRssMb = 0;
  let peakHeapMb = 0;
  try {
    for (const s of scenarios) {
      const started = performance.now();
      const r = await runScenario(fakes, s);
      runsMs.push(performance.now() - started);
      peakRssMb = Math.max(peakRssMb, ...r.slices.map((x) => x.rssMb));
      peakHeapMb = Math.max(peakHeapMb, ...r.slices.map((x) => x.heapMb));
      metrics.push(...r.metrics);
      notes.push(...r.notes);
    }
  } finally {
    await fakes.close();
  }
  notes.push(
    'peak rss/heap: absolute, in the bot-side process (not a rise over a baseline)',
    'GETs/job-h: GETs in a slice ÷ (jobs × slice length), scaled to an hour; "steady" is 3600 s ÷ the mean delay the poller scheduled for old jobs',
    `naive: one ${NAIVE_INTERVAL_MS / 1000} s timer per job (random phase) on a sample, in the fakes' process against the same emulator in the same window; its per-job rate holds at any job count`,
    `polling starts ${WARM_MS / 1000} s before the window: the pool starts 16 wide and widens to what the load needs in a few seconds (by half a second while it falls behind), a restart's cost kept out of the steady figures`,
    'pool width: what the poller keeps in flight (poll-concurrency.ts); in flight at the API: the most GETs of the bot the emulator held at once',
    'worst delay (old): the longest delay the poller scheduled + the longest poll lag seen: the longest a change waits for its GET',
    "change → post: the emulator completes young jobs at random moments; the fake Slack records the announcement (real notifier, WebClient over HTTP). The notifier paces posts 1 s per channel and updates the root right after the announcement in the same channel, so a burst of completions queues behind those pauses: change → GET is the poller's share",
    'the bot side makes one GET, one store read and one Slack call before the window (the first fetch loads undici; first queries compile): a one-off start-up cost of ~100-150 ms of event loop, kept out of the figures',
  );
  return { name: 'poller', runsMs, peakRssMb, peakHeapMb, notes, stats: {}, metrics };
}

interface Outcome {
  metrics: Metric[];
  notes: string[];
  slices: Slice[];
}

async function runScenario(fakes: Child, s: Scenario): Promise<Outcome> {
  const label = `${s.engine} ${s.jobs / 1000}k ${s.latencyMs} ms`;
  log(`poller: ${label}, ${s.windowMs / 1000} s window`);
  const { apiUrl, slackUrl } = await fakes.call<{ apiUrl: string; slackUrl: string }>('start', {
    latencyMs: s.latencyMs,
  });
  const dir = mkdtempSync(join(tmpdir(), 'bench-poller-'));
  const database = s.engine === 'postgres' ? await createTestDatabase() : undefined;
  const place: Place = database
    ? { kind: 'postgres', url: database.url }
    : { kind: 'sqlite', path: join(dir, 'bot.sqlite') };
  // The bot's side runs with npm start's node flags; BENCH_BOT_FLAGS replaces them (to try
  // other V8 heap settings).
  const flags =
    process.env.BENCH_BOT_FLAGS === undefined
      ? botNodeFlags()
      : process.env.BENCH_BOT_FLAGS.split(' ').filter(Boolean);
  const bot = forkChild('./poller-bot.ts', ['--expose-gc', ...flags]);
  try {
    // Opening the store runs the migrations; the seed writes straight into the schema.
    const silent = silentLogger();
    const migrated =
      place.kind === 'sqlite'
        ? await openSqliteStore(place.path)
        : await openPostgresStore(place.url, { log: silent });
    await migrated.close();
    const { jobs, young } = seedPlan(s, Date.now());
    const seeding = performance.now();
    const threads = await seedJobs(place, jobs);
    const naive = Array.from({ length: s.naive }, (_, i) => `n${i}`);
    await fakes.call('seed', { ids: [...jobs.map((j) => j.jobId), ...naive] });
    const seedMs = performance.now() - seeding;
    const plans = await duePlans(place, Date.now() + 10_000);
    const oldThreads = [...threads].filter(([id]) => id.startsWith('o')).map(([, t]) => t);
    const settings: BotSettings = {
      ...{ place, apiUrl, slackUrl, oldThreads },
      ...{ baseMs: BASE_MS, maxMs: MAX_MS, leaseMs: LEASE_MS },
    };
    const openRssMb = await bot.call<number>('open', settings);
    // The seeded times were relative to the plan; polling starts now, the window after the
    // warm-up (the pool starts at its floor and widens to what the load needs).
    const t0 = Date.now() + 200 + WARM_MS;
    await shiftTimes(place, t0 - WARM_MS - jobs.planned);
    const sample = jobs.filter((j) => j.jobId.startsWith('c')).map((j) => j.jobId);
    const complete = sample.map((id) => ({
      id,
      // Late enough in the window to be seen and said before the harvest gives up.
      afterMs: Math.round(Math.random() * Math.max(400, s.windowMs - 6_500)),
    }));
    const [slices] = await Promise.all([
      bot.call<Slice[]>('run', { t0, warmMs: WARM_MS, windowMs: s.windowMs, slices: s.slices }),
      fakes.call<number>('window', { t0, naive, complete }),
    ]);
    const seen = await harvest(fakes, sample.length);
    const report = await bot.call<BotReport>('stop');
    return {
      slices,
      metrics: figures(label, s, { t0, slices, report, ...seen }, { young, old: s.jobs - young }),
      notes: [
        `${label}: seeded in ${Math.round(seedMs)} ms; bot side at ${openRssMb} MB RSS with the store open, before polling; ` +
          `${report.polls} polls; live heap after a full GC at the end ${Math.round(report.liveHeapMb)} MB; ` +
          `stop took ${Math.round(report.stopMs)} ms; ` +
          `${seen.unposted} of ${sample.length} completions not posted in time`,
        ...plans.map((p) => `${label} plan ${p}`),
      ],
    };
  } finally {
    await bot.close();
    await fakes.call('stop');
    rmSync(dir, { recursive: true, force: true });
    await database?.drop();
  }
}

/**
 * A tenth young (started in the last 20 s, on the first delay), the rest old (10 to 60 min,
 * at the ceiling, due at moments spread over it, as jitter leaves them); times from `at`.
 */
function seedPlan(s: Scenario, at: number) {
  const young = Math.round(s.jobs * YOUNG_SHARE);
  const jobs: SeedJob[] & { planned?: number } = Array.from({ length: s.jobs }, (_, i) => {
    const isYoung = i < young;
    const age = isYoung ? Math.random() * 20_000 : (10 + Math.random() * 50) * 60_000;
    return {
      // The first young ones are completed during the window: a cohort of their own.
      jobId: `${isYoung ? (i < Math.min(s.completions, young / 2) ? 'c' : 'y') : 'o'}${i}`,
      channel: `C${i % 1000}`,
      createdAt: Math.round(at - age),
      nextPollAt: Math.round(at + Math.random() * (isYoung ? BASE_MS : MAX_MS)),
      pollIntervalMs: isYoung ? BASE_MS : MAX_MS,
    };
  });
  return { jobs: Object.assign(jobs, { planned: at }), young };
}

/** Waits for the completions near the end of the window to be seen and said (8 s at most). */
async function harvest(fakes: Child, expected: number) {
  const gets: GetSeen[] = [];
  let completions: Completion[] = [];
  for (let waited = 0; ; waited += 250) {
    const h = await fakes.call<{ gets: GetSeen[]; completions: Completion[] }>('harvest', {
      stopNaive: waited === 0,
    });
    gets.push(...h.gets);
    completions = h.completions;
    const done = completions.length === expected && completions.every((c) => c.postedAt);
    if (done || waited >= 8_000) break;
    await sleep(250);
  }
  const unposted = expected - completions.filter((c) => c.postedAt).length;
  return { gets, completions, unposted };
}

interface Run {
  t0: number;
  slices: Slice[];
  report: BotReport;
  gets: GetSeen[];
  completions: Completion[];
}

function figures(label: string, s: Scenario, r: Run, n: { young: number; old: number }): Metric[] {
  const sliceMs = s.windowMs / s.slices;
  /** Per slice of the window: `fold` over the GETs in it. */
  const perSlice = (value: (g: GetSeen) => number, fold: (a: number, b: number) => number) =>
    Array.from({ length: s.slices }, (_, i) => {
      const [from, to] = [r.t0 + i * sliceMs, r.t0 + (i + 1) * sliceMs];
      return r.gets.filter((g) => g.at >= from && g.at < to).reduce((a, g) => fold(a, value(g)), 0);
    });
  const rate = (cohort: string, jobs: number) =>
    perSlice(
      (g) => (g.cohort === cohort ? 1 : 0),
      (a, b) => a + b,
    ).map((count) => count / (jobs * (sliceMs / HOUR_MS)));
  const naive = rate('n', s.naive);
  const young = rate('y', n.young - Math.min(s.completions, n.young / 2));
  const old = rate('o', n.old);
  const { oldDelays, lags } = r.report;
  const meanOldDelay = oldDelays.reduce((a, b) => a + b, 0) / Math.max(1, oldDelays.length);
  const toPost = r.completions
    .filter((c) => c.postedAt !== null)
    .map((c) => (c.postedAt ?? 0) - c.completedAt);
  const toGet = r.completions
    .filter((c) => c.detectedAt !== null)
    .map((c) => (c.detectedAt ?? 0) - c.completedAt);
  const m = (name: string, unit: string, runs: number[], target?: string): Metric => ({
    name: `${label} ${name}`,
    unit,
    runs: runs.length ? runs : [Number.NaN],
    ...(target ? { target } : {}),
  });
  /** A figure read once per slice of the window. */
  const slice = (name: string, unit: string, key: keyof Slice, target?: string) =>
    m(
      name,
      unit,
      r.slices.map((x) => x[key]),
      target,
    );
  const most = (xs: number[]) => xs.reduce((a, b) => Math.max(a, b), Number.NEGATIVE_INFINITY);
  return [
    m('naive GETs/job-h', 'GET', naive, `${HOUR_MS / NAIVE_INTERVAL_MS}`),
    m('young GETs/job-h', 'GET', young, `≥ ${Math.round((0.9 * HOUR_MS) / BASE_MS)} (90 %)`),
    m('old GETs/job-h', 'GET', old, `≤ ⅓ naive (${Math.round(median(naive) / 3)})`),
    m('old steady GETs/job-h', 'GET', [HOUR_MS / meanOldDelay]),
    m(
      'old ÷ naive',
      '×',
      old.map((x, i) => x / (naive[i] ?? Number.NaN)),
      '≤ 0.333',
    ),
    m('change → post p50 (young)', 'ms', [percentile(toPost, 50)], `≤ ${BASE_MS}`),
    m('change → post p99 (young)', 'ms', [percentile(toPost, 99)], `≤ ${2 * BASE_MS}`),
    m('change → GET p50 (young)', 'ms', [percentile(toGet, 50)]),
    m('worst delay (old)', 'ms', [most(oldDelays) + most(lags)], `≤ ${MAX_MS * 1.1}`),
    slice('poll lag p99', 'ms', 'lagP99Ms'),
    slice('RSS', 'MB', 'rssMb', '< 150'),
    slice('event-loop delay p99', 'ms', 'loopP99Ms'),
    slice('event-loop delay max', 'ms', 'loopMaxMs', '< 100'),
    slice('GC pause max', 'ms', 'gcMaxMs'),
    slice('pool width at slice end', 'polls', 'width'),
    slice('GET latency the pool saw', 'ms', 'getMs'),
    m(
      'bot GETs in flight at the API, max',
      'GETs',
      perSlice((g) => g.inFlight, Math.max),
    ),
  ];
}
