/**
 * Where the fairness benchmark's time goes, over a window: each replica's CPU and polls
 * (count and mean lag behind their due time, from its /metrics), the GETs the API emulator
 * answered, this process's own CPU and event-loop delay (the fakes answer from here: if
 * it is saturated, the replicas' figures say more about it than about them), PostgreSQL's CPU
 * (its server and backends, whoever they serve) and how busy the machine's cores were.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import type { Replica, World } from './fairness-world.ts';

/** utime + stime of `pid` from /proc (Linux, USER_HZ 100), in seconds. */
export function cpuSeconds(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return Number.NaN;
  }
}

/** utime + stime of every process named `postgres` (the server and its backends), in seconds. */
export function postgresCpuSeconds(): number {
  let total = 0;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      if (stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')) === 'postgres')
        total += cpuSeconds(Number(entry));
    } catch {} // it ended meanwhile
  }
  return total;
}

/** The machine's cores, busy and in all, in clock ticks since boot (/proc/stat). */
function machineTicks(): { busy: number; all: number } {
  const line = readFileSync('/proc/stat', 'utf8').split('\n')[0] ?? '';
  const t = line.trim().split(/\s+/).slice(1).map(Number);
  const all = t.reduce((a, b) => a + b, 0);
  return { busy: all - (t[3] ?? 0) - (t[4] ?? 0), all }; // idle and iowait are not busy
}

/** What a replica's /metrics says of its polls: how many, and their lag's sum (s). */
export interface PollCounts {
  polls: number;
  lagSumS: number;
  lagCount: number;
  /**
   * Its event loop's delay, p99 and max (s), since the scrape before (prom-client resets
   * its histogram at each scrape).
   */
  loopP99S: number;
  loopMaxS: number;
}

export async function pollCounts(r: Replica): Promise<PollCounts> {
  const text = await (await fetch(`http://127.0.0.1:${r.port}/metrics`)).text();
  const sum = (re: RegExp) =>
    [...text.matchAll(re)].reduce((a, m) => a + Number(m[1] ?? Number.NaN), 0);
  return {
    polls: sum(/^docs_agent_polls_total\{[^}]*\} (\S+)$/gm),
    lagSumS: sum(/^docs_agent_poll_lag_seconds_sum(?:\{[^}]*\})? (\S+)$/gm),
    lagCount: sum(/^docs_agent_poll_lag_seconds_count(?:\{[^}]*\})? (\S+)$/gm),
    loopP99S: sum(/^nodejs_eventloop_lag_p99_seconds(?:\{[^}]*\})? (\S+)$/gm),
    loopMaxS: sum(/^nodejs_eventloop_lag_max_seconds(?:\{[^}]*\})? (\S+)$/gm),
  };
}

interface Snap {
  at: number;
  cpu: number[];
  pgCpu: number;
  machine: { busy: number; all: number };
  polls: PollCounts[];
  gets: number;
  benchCpu: NodeJS.CpuUsage;
}

export interface WindowFigures {
  seconds: number;
  replicaCpuPct: number[];
  /** PostgreSQL's processes, in % of one core. */
  pgCpuPct: number;
  /** Every core of the machine, busy, in % of them all. */
  machineBusyPct: number;
  pollsPerS: number[];
  meanLagMs: number[];
  /** Each replica's event-loop delay over the window, p99 and max. */
  replicaLoopP99Ms: number[];
  replicaLoopMaxMs: number[];
  getsPerS: number;
  benchCpuPct: number;
  benchLoopP99Ms: number;
  benchLoopMaxMs: number;
}

/** Counts GETs as the emulator records them (the caller clears its list as it goes). */
export function startProbe(world: World) {
  let gets = 0;
  const countGets = () => {
    gets += world.api.requests.filter((r) => r.kind === 'get').length;
    world.api.requests.length = 0; // it keeps every request: its memory, not the bots'
  };
  const loop = monitorEventLoopDelay({ resolution: 10 });
  const snap = async (): Promise<Snap> => {
    countGets();
    return {
      at: performance.now(),
      cpu: world.replicas.map((r) => cpuSeconds(r.pid)),
      pgCpu: postgresCpuSeconds(),
      machine: machineTicks(),
      polls: await Promise.all(world.replicas.map(pollCounts)),
      gets,
      benchCpu: process.cpuUsage(),
    };
  };
  return {
    countGets,
    snap,
    /** Starts the window: the event loop's delay is measured from here. */
    async begin(): Promise<Snap> {
      loop.reset();
      loop.enable();
      return snap();
    },
    async end(from: Snap): Promise<WindowFigures> {
      const to = await snap();
      loop.disable();
      const s = (to.at - from.at) / 1000;
      const used = process.cpuUsage(from.benchCpu);
      return {
        seconds: s,
        replicaCpuPct: to.cpu.map((c, i) => (100 * (c - from.cpu[i]!)) / s),
        pgCpuPct: (100 * (to.pgCpu - from.pgCpu)) / s,
        machineBusyPct:
          (100 * (to.machine.busy - from.machine.busy)) /
          Math.max(1, to.machine.all - from.machine.all),
        pollsPerS: to.polls.map((p, i) => (p.polls - from.polls[i]!.polls) / s),
        meanLagMs: to.polls.map(
          (p, i) =>
            (1000 * (p.lagSumS - from.polls[i]!.lagSumS)) /
            Math.max(1, p.lagCount - from.polls[i]!.lagCount),
        ),
        replicaLoopP99Ms: to.polls.map((p) => 1000 * p.loopP99S),
        replicaLoopMaxMs: to.polls.map((p) => 1000 * p.loopMaxS),
        getsPerS: (to.gets - from.gets) / s,
        benchCpuPct: (100 * (used.user + used.system)) / 1e6 / s,
        benchLoopP99Ms: loop.percentile(99) / 1e6,
        benchLoopMaxMs: loop.max / 1e6,
      };
    },
  };
}

export function windowLine(name: string, w: WindowFigures): string {
  const list = (xs: number[]) => xs.map((x) => x.toFixed(0)).join('/');
  return (
    `${name} (${w.seconds.toFixed(1)} s): replicas CPU ${list(w.replicaCpuPct)} %, polls/s ${list(w.pollsPerS)}, ` +
    `mean poll lag ${list(w.meanLagMs)} ms, loop delay p99 ${list(w.replicaLoopP99Ms)} ms, max ${list(w.replicaLoopMaxMs)} ms; PostgreSQL CPU ${w.pgCpuPct.toFixed(0)} %; machine ${w.machineBusyPct.toFixed(0)} % busy; emulator GETs/s ${w.getsPerS.toFixed(0)}; ` +
    `bench process CPU ${w.benchCpuPct.toFixed(0)} %, loop delay p99/max ${w.benchLoopP99Ms.toFixed(0)}/${w.benchLoopMaxMs.toFixed(0)} ms`
  );
}
