/**
 * The fairness benchmark's figures (bench/fairness.ts): what one run measured, the metrics
 * the summary prints beside the one-workspace targets (docs/performance.md), and the line
 * each run logs.
 */
import { type WindowFigures, windowLine } from './fairness-probe.ts';
import { log, type Metric, percentile } from './measure.ts';

export const QUIET_WORKSPACES = 10;
export const QUIET_JOBS = 3;
/** The one-workspace targets (docs/performance.md): change → post at 10,000 polled jobs; 40 /agent at once. */
const TARGET = {
  announceP50: 5_000,
  announceP99: 10_000,
  firstP50: 300,
  firstMax: 1_500,
  status: 300,
};

export interface RunFigures {
  quietMs: number[];
  /** Of that: the API's finish until a poll recorded it (the rest is the notifier's). */
  quietPollMs: number[];
  /** When the last busy job was announced, from the burst (NaN: not within the deadline). */
  busyDoneMs: number;
  busyAnnounced: number;
  firstMs: number[];
  statusMs: number[];
  /** Each replica's RSS samples (MB) from the burst to the end. */
  rss: number[][];
  /** Where the time went: the burst's first seconds, and the warm-up before it. */
  burst: WindowFigures;
  warm: WindowFigures;
}

export const max = (xs: number[]) => (xs.length ? Math.max(...xs) : Number.NaN);
const median = (xs: number[]) => percentile(xs, 50);

export function metrics(loaded: RunFigures[], alone: RunFigures[]): Metric[] {
  const m = (name: string, unit: string, runs: number[], target?: string): Metric => ({
    name,
    unit,
    runs,
    ...(target ? { target } : {}),
  });
  const q = (rs: RunFigures[], p: number) => rs.map((r) => percentile(r.quietMs, p));
  const ratio = (p: number) =>
    loaded.map((r, i) => percentile(r.quietMs, p) / percentile(alone[i]!.quietMs, p));
  const t = TARGET;
  return [
    m('quiet announcement p50, burst', 'ms', q(loaded, 50), `≤ ${t.announceP50} ms`),
    m('quiet announcement p95, burst', 'ms', q(loaded, 95)),
    m('quiet announcement p99, burst', 'ms', q(loaded, 99), `≤ ${t.announceP99} ms`),
    m(
      'of which until polled, p50, burst',
      'ms',
      loaded.map((r) => percentile(r.quietPollMs, 50)),
    ),
    m('quiet announcement p50, alone', 'ms', q(alone, 50)),
    m('quiet announcement p99, alone', 'ms', q(alone, 99)),
    m('quiet p50 burst / alone', '×', ratio(50), '≈ 1'),
    m('quiet p99 burst / alone', '×', ratio(99), '≈ 1'),
    m(
      'every busy job announced',
      's',
      loaded.map((r) => r.busyDoneMs / 1000),
    ),
    m(
      'quiet 40 /agent: first answer p50, burst',
      'ms',
      loaded.map((r) => median(r.firstMs)),
      `≤ ${t.firstP50} ms`,
    ),
    m(
      'quiet 40 /agent: first answer max, burst',
      'ms',
      loaded.map((r) => max(r.firstMs)),
      `≤ ${t.firstMax} ms`,
    ),
    m(
      'quiet 40 /agent: first answer p50, alone',
      'ms',
      alone.map((r) => median(r.firstMs)),
    ),
    m(
      'quiet 40 /agent: first answer max, alone',
      'ms',
      alone.map((r) => max(r.firstMs)),
    ),
    m(
      'quiet /agent status p50, burst',
      'ms',
      loaded.map((r) => median(r.statusMs)),
      `≤ ${t.status} ms`,
    ),
    m(
      'quiet /agent status max, burst',
      'ms',
      loaded.map((r) => max(r.statusMs)),
      `≤ ${t.status} ms`,
    ),
    m(
      'quiet /agent status max, alone',
      'ms',
      alone.map((r) => max(r.statusMs)),
    ),
    ...[0, 1].flatMap((i) => [
      m(
        `replica ${i + 1} RSS median, burst`,
        'MB',
        loaded.map((r) => median(r.rss[i] ?? [])),
      ),
      m(
        `replica ${i + 1} RSS peak, burst`,
        'MB',
        loaded.map((r) => max(r.rss[i] ?? [])),
      ),
    ]),
  ];
}

export function logRun(
  i: number,
  runs: number,
  shape: { workspaces: number; jobs: number },
  r: RunFigures,
  a: RunFigures,
): void {
  const p = (xs: number[], n: number) => percentile(xs, n).toFixed(0);
  log(
    `fairness run ${i + 1}/${runs}: quiet p50/p95/p99 ${p(r.quietMs, 50)}/${p(r.quietMs, 95)}/${p(r.quietMs, 99)} ms ` +
      `under the burst (poll part ${p(r.quietPollMs, 50)}/${p(r.quietPollMs, 95)}) ` +
      `(${r.quietMs.length} of ${QUIET_WORKSPACES * QUIET_JOBS}), ${p(a.quietMs, 50)}/${p(a.quietMs, 95)}/${p(a.quietMs, 99)} ms alone; ` +
      `busy ${r.busyAnnounced}/${shape.workspaces * shape.jobs} announced, last at ${(r.busyDoneMs / 1000).toFixed(1)} s; ` +
      `/agent first answer p50/max ${p(r.firstMs, 50)}/${max(r.firstMs).toFixed(0)} ms (alone ${p(a.firstMs, 50)}/${max(a.firstMs).toFixed(0)}), ` +
      `status p50/max ${p(r.statusMs, 50)}/${max(r.statusMs).toFixed(0)} ms (alone ${p(a.statusMs, 50)}/${max(a.statusMs).toFixed(0)}); ` +
      `RSS peak ${r.rss.map((s) => max(s).toFixed(0)).join(' / ')} MB`,
  );
  const sorted = (xs: number[]) => [...xs].sort((x, y) => x - y).map((x) => x.toFixed(0));
  log(`  /agent first answers, sorted (ms): ${sorted(r.firstMs).join(' ')}`);
  log(`  the same alone: ${sorted(a.firstMs).join(' ')}`);
  log(`  ${windowLine('warm-up', r.warm)}`);
  log(`  ${windowLine('burst', r.burst)}`);
  log(`  ${windowLine('alone', a.burst)}`);
}
