/**
 * The bot's side of the poller benchmark, in a process of its own that holds what the bot
 * holds after a restart with thousands of jobs in its database: the store, the ApiClient, the
 * poller and the notifier (posting through a WebClient). RSS, heap and event-loop delay are
 * measured here, per slice of the window. Driven over IPC by bench/poller.ts.
 */
import { monitorEventLoopDelay, PerformanceObserver } from 'node:perf_hooks';
import { WebClient } from '@slack/web-api';
import { ApiClient } from '../src/api/client.ts';
import { type Notifier, startNotifier } from '../src/jobs/notifier.ts';
import { type Poller, startPoller } from '../src/jobs/poller.ts';
import { noJobMetrics } from '../src/jobs/ports.ts';
import { createSlackJobChat } from '../src/slack/chat.ts';
import { oneClient } from '../src/slack/workspace-clients.ts';
import { openPostgresStore } from '../src/store/postgres.ts';
import { openSqliteStore } from '../src/store/sqlite.ts';
import type { Store } from '../src/store/types.ts';
import { MB, percentile, silentLogger } from './measure.ts';
import {
  API_KEY,
  type BotReport,
  PROJECT,
  SLACK_TOKEN,
  type Slice,
  serve,
  sleep,
} from './poller-ipc.ts';
import type { Place } from './poller-world.ts';

export interface BotSettings {
  place: Place;
  apiUrl: string;
  slackUrl: string;
  baseMs: number;
  maxMs: number;
  leaseMs: number;
  /** Threads of old jobs (the rest are young). */
  oldThreads: number[];
}

const silent = silentLogger();
let store: Store | undefined;
let running: { poller: Poller; notifier: Notifier; api: ApiClient } | undefined;
let oldThreads = new Set<number>();
const oldDelays: number[] = [];
const lags: number[] = [];
const sliceLags: number[] = [];
let settings: BotSettings | undefined;

serve({
  async open(s: BotSettings) {
    settings = s;
    oldThreads = new Set(s.oldThreads);
    store =
      s.place.kind === 'sqlite'
        ? await openSqliteStore(s.place.path)
        : await openPostgresStore(s.place.url, { log: silent });
    // What a bot does in its first seconds anyway: the first fetch loads undici, the first
    // queries and answers compile their code. Done here, it stays out of the window.
    const api = new ApiClient({
      baseUrl: s.apiUrl,
      apiKey: API_KEY,
      projectId: PROJECT,
      log: silent,
    });
    await api.getJob('warm-up', { retries: 0 }).catch(() => {});
    await store.nextDueAt();
    await slackClient(s.slackUrl).auth.test();
    return Math.round(process.memoryUsage().rss / MB);
  },

  /**
   * Starts polling `warmMs` before `t0` (the pool widens to what the load needs), measures
   * from `t0`; answers once the window is over (the poller keeps going).
   */
  async run(a: { t0: number; warmMs: number; windowMs: number; slices: number }): Promise<Slice[]> {
    if (!store || !settings) throw new Error('open first');
    const s = settings;
    const base = store;
    // What the poller records, seen on its way to the store.
    const watched: Store = {
      ...base,
      recordPolls(ps) {
        for (const p of ps)
          if (p.schedule.nextPollAt !== null && oldThreads.has(p.threadId) && p.now >= a.t0)
            oldDelays.push(p.schedule.nextPollAt - p.now);
        return base.recordPolls(ps);
      },
    };
    const api = new ApiClient({
      baseUrl: s.apiUrl,
      apiKey: API_KEY,
      projectId: PROJECT,
      log: silent,
    });
    const slack = slackClient(s.slackUrl);
    const owner = 'bench-replica';
    const notifier = startNotifier({
      store: watched,
      chat: createSlackJobChat(oneClient(slack), silent),
      log: silent,
      owner,
      leaseMs: s.leaseMs,
    });
    const metrics = {
      ...noJobMetrics,
      poll: (_: string, lagMs: number) => {
        if (Date.now() < a.t0) return;
        lags.push(lagMs);
        sliceLags.push(lagMs);
      },
    };
    const loop = monitorEventLoopDelay({ resolution: 10 });
    await sleep(a.t0 - a.warmMs - Date.now());
    const poller = startPoller({
      store: watched,
      api,
      log: silent,
      backoff: { baseMs: s.baseMs, maxMs: s.maxMs },
      owner,
      leaseMs: s.leaseMs,
      // BENCH_POLL_CONCURRENCY_MAX=16 is the fixed pool of 16 this replaced: a before/after.
      ...(process.env.BENCH_POLL_CONCURRENCY_MAX
        ? { concurrency: Number(process.env.BENCH_POLL_CONCURRENCY_MAX) }
        : {}),
      metrics,
      onChange: () => notifier.changed(),
    });
    running = { poller, notifier, api };
    await sleep(a.t0 - Date.now());
    loop.enable();
    let gcMaxMs = 0;
    const gcs = new PerformanceObserver((list) => {
      for (const e of list.getEntries()) gcMaxMs = Math.max(gcMaxMs, e.duration);
    });
    gcs.observe({ entryTypes: ['gc'] });
    const slices: Slice[] = [];
    const sliceMs = a.windowMs / a.slices;
    for (let i = 0; i < a.slices; i++) {
      let [rss, heap] = [0, 0];
      const sample = () => {
        const m = process.memoryUsage();
        rss = Math.max(rss, m.rss);
        heap = Math.max(heap, m.heapUsed);
      };
      const sampler = setInterval(sample, 20);
      loop.reset();
      sliceLags.length = 0;
      gcMaxMs = 0;
      await sleep(a.t0 + (i + 1) * sliceMs - Date.now());
      clearInterval(sampler);
      sample();
      slices.push({
        rssMb: rss / MB,
        heapMb: heap / MB,
        loopP99Ms: loop.percentile(99) / 1e6,
        loopMaxMs: loop.max / 1e6,
        lagP99Ms: percentile(sliceLags, 99),
        gcMaxMs,
        width: poller.pool().width,
        getMs: poller.pool().latencyMs,
      });
    }
    gcs.disconnect();
    loop.disable();
    return slices;
  },

  async stop(): Promise<BotReport> {
    // What is really held, as opposed to what the collector has not reclaimed yet.
    globalThis.gc?.();
    const liveHeapMb = process.memoryUsage().heapUsed / MB;
    const started = performance.now();
    await running?.poller.stop();
    const stopMs = performance.now() - started;
    await running?.notifier.stop();
    running?.api.stop();
    await store?.close();
    return { oldDelays, lags, stopMs, polls: lags.length, liveHeapMb };
  },
});

/** As the bot's Slack app configures its client: the outbox owns retries. */
function slackClient(url: string): WebClient {
  return new WebClient(SLACK_TOKEN, {
    slackApiUrl: url,
    rejectRateLimitedCalls: true,
    retryConfig: { retries: 0 },
  });
}
