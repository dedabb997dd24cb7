/**
 * The poller benchmark's outside world, in a process of its own so that the measured process
 * holds only the bot's side: the API emulator (every job the store watches, a few ms per
 * answer) and the fake Slack. Driven over IPC by bench/poller-world.ts. It also runs the
 * naive poller the numbers are compared with (one 5 s timer per job, as in the service's own
 * polling example), against the same emulator, and watches what happens to the jobs it
 * completes: the first GET that saw the change, and the announcement that said it.
 */
import { ApiClient } from '../src/api/client.ts';
import { ApiEmulator, type RecordedRequest } from '../test/fakes/api-emulator.ts';
import { FakeSlack } from '../test/fakes/slack.ts';
import { silentLogger } from './measure.ts';
import {
  API_KEY,
  type Completion,
  type GetSeen,
  NAIVE_INTERVAL_MS,
  PROJECT,
  serve,
  sleep,
} from './poller-ipc.ts';

let api: ApiEmulator | undefined;
let slack: FakeSlack | undefined;
let drained = 0;
let gets: GetSeen[] = [];
const watching = new Map<string, Completion & { seq: number }>();
const timers = new Set<NodeJS.Timeout>();
let drainTimer: NodeJS.Timeout | undefined;
/** The bot's GETs not answered yet, and how many there were as each arrived. */
const open = new Set<RecordedRequest>();
const openAtArrival = new WeakMap<RecordedRequest, number>();

function arrived(r: RecordedRequest): void {
  // Not the naive poller's: only the bot's pool is measured.
  if (r.kind !== 'get' || decodeURIComponent(r.path.split('/').at(-1) ?? '').startsWith('n'))
    return;
  for (const o of open) if (o.answeredAt !== null) open.delete(o);
  open.add(r);
  openAtArrival.set(r, open.size);
}

/** Folds the emulator's request log into compact counts, so that it does not grow. */
function drain(): void {
  if (!api) return;
  for (const [i, r] of api.requests.entries()) {
    if (r.kind !== 'get') continue;
    const id = decodeURIComponent(r.path.split('/').at(-1) ?? '');
    gets.push({ cohort: id[0] ?? '?', at: r.at, inFlight: openAtArrival.get(r) ?? 0 });
    const w = watching.get(id);
    if (w && w.detectedAt === null && drained + i >= w.seq) w.detectedAt = r.at;
  }
  drained += api.requests.length;
  api.requests.length = 0;
}

function posts(): void {
  for (const c of slack?.callsTo('chat.postMessage') ?? []) {
    const key = (c.args.metadata as { event_payload?: { key?: string } } | undefined)?.event_payload
      ?.key;
    const w = key ? watching.get(key.split(':')[0] ?? '') : undefined;
    if (w && w.postedAt === null && (c.response as { ok?: boolean }).ok) w.postedAt = c.at;
  }
}

serve({
  async start(a: { latencyMs: number }) {
    api = await ApiEmulator.start({ apiKey: API_KEY, projectId: PROJECT });
    api.setLatency('get', a.latencyMs);
    open.clear();
    api.onRequest(arrived);
    slack = await FakeSlack.start();
    drained = 0;
    gets = [];
    drainTimer = setInterval(drain, 200);
    return { apiUrl: api.url, slackUrl: slack.url };
  },

  seed(a: { ids: string[] }) {
    for (const id of a.ids) api?.setJob(id, {});
    return api?.jobs.size;
  },

  /** From `t0`: the naive poller on `naive`, and `complete` completed at their offsets. */
  async window(a: { t0: number; naive: string[]; complete: { id: string; afterMs: number }[] }) {
    await sleep(a.t0 - Date.now());
    drain();
    gets = [];
    const t0 = a.t0;
    const client = new ApiClient({
      baseUrl: api?.url ?? '',
      apiKey: API_KEY,
      projectId: PROJECT,
      log: silentLogger(),
    });
    // Jobs started at random moments: each timer's phase is uniform over the interval.
    for (const id of a.naive) {
      const first = setTimeout(() => {
        const ask = () => void client.getJob(id).catch(() => {});
        ask();
        const every = setInterval(ask, NAIVE_INTERVAL_MS);
        timers.add(every);
      }, Math.random() * NAIVE_INTERVAL_MS);
      timers.add(first);
    }
    for (const c of a.complete) {
      const t = setTimeout(() => {
        if (!api) return;
        api.complete(c.id, `https://github.com/acme/docs/pull/${c.id}`);
        const seq = drained + api.requests.length;
        watching.set(c.id, {
          id: c.id,
          completedAt: Date.now(),
          detectedAt: null,
          postedAt: null,
          seq,
        });
      }, c.afterMs);
      timers.add(t);
    }
    return t0;
  },

  /** GETs since the window opened, and what became of the completed jobs so far. */
  harvest(a: { stopNaive: boolean }) {
    if (a.stopNaive) for (const t of timers) clearTimeout(t);
    drain();
    posts();
    const seen = gets;
    gets = [];
    return {
      gets: seen,
      completions: [...watching.values()].map(({ seq: _, ...c }) => c),
    };
  },

  async stop() {
    for (const t of timers) clearTimeout(t);
    timers.clear();
    clearInterval(drainTimer);
    watching.clear();
    await api?.close();
    await slack?.close();
    api = undefined;
    slack = undefined;
  },
});
