import type { RecordedRequest } from '../fakes/api-emulator.ts';
import { sleep, until } from '../helpers/net.ts';
import { jobIdOf, type Violation } from './checks.ts';
import type { ChaosWorld } from './world.ts';

/**
 * The chaos scenarios of the issue, each on its own world (fresh fakes and database). Each
 * returns the violations found and the summary line; nothing here asserts, so the CLI and
 * vitest report the same findings the same way.
 */
export interface ScenarioResult {
  name: string;
  summary: string;
  violations: Violation[];
  ms: number;
}

const KILL_POINTS = ['create', 'record', 'post', 'followup', 'digest'] as const;
type KillPoint = (typeof KILL_POINTS)[number];
/** How long a trigger is waited for before the kill happens anyway. */
const TRIGGER_MS = 4_000;

export async function result(
  w: ChaosWorld,
  name: string,
  t0: number,
  settleMs: number,
  more: Violation[] = [],
  stallMs?: number,
): Promise<ScenarioResult> {
  const left = await w.settle(settleMs, stallMs);
  const { violations, counts } = w.check();
  for (const l of left) {
    const id = /(?:root|job) (\S+)/.exec(l)?.[1];
    if (!id || !violations.some((v) => v.what.includes(id)))
      violations.push({ kind: 'other', what: `not settled: ${l}` });
  }
  violations.push(...more);
  counts.lost = violations.filter((v) => v.kind === 'lost').length;
  counts.duplicates = violations.filter((v) => v.kind === 'duplicate').length;
  const summary = w.summary(counts);
  w.out(summary);
  return { name, summary, violations, ms: Date.now() - t0 };
}

/**
 * kill -9 at randomised points, one bot at a time on one database and one set of fakes:
 * each iteration starts the bot, waits for the moment of interest (a create reaching the
 * service, a change being recorded, an announcement in flight, a follow-up, the digest),
 * kills it a random few milliseconds later, and lets people go on while it is down. In the
 * end the bot starts "later" (so that interrupted work is stale and recovered) and
 * everything must be finished and said exactly once.
 */
export async function killScenario(w: ChaosWorld, iterations: number): Promise<ScenarioResult> {
  const t0 = Date.now();
  const rng = w.rng;
  w.enableDigest();
  let digestKills = 0;
  for (let i = 0; i < iterations; i++) {
    const bot = await w.startBot('a');
    await w.redeliver();
    const threads = w.jobThreads().filter((t) => t.job.status !== 'archived');
    const finishable = threads.filter((t) => w.canFinish(t.job));
    let point: KillPoint = rng.pick(KILL_POINTS);
    if (point === 'digest' && (w.digestPosts().length > 0 || digestKills >= 2)) point = 'create';
    if ((point === 'record' || point === 'post') && finishable.length === 0) point = 'create';
    if (point === 'followup' && threads.length === 0) point = 'create';
    // Keep a few jobs running for the other points to act on.
    if (threads.filter((t) => t.job.status === 'active').length < 2 && rng.chance(0.5))
      point = 'create';
    let hit = true;
    switch (point) {
      case 'create': {
        const creates = w.api.requestsTo('create').length;
        const posts = w.slack.callsTo('chat.postMessage').length;
        const variant = rng.pick(['root', 'create', 'accepted'] as const);
        const sent = w.command();
        if (variant === 'root')
          hit = await until(() => w.slack.callsTo('chat.postMessage').length > posts, TRIGGER_MS);
        else if (variant === 'create')
          hit = await until(() => w.api.requestsTo('create').length > creates, TRIGGER_MS);
        else hit = (await bot.waitForLog('job.accepted', () => true, TRIGGER_MS)) !== undefined;
        await sleep(rng.int(0, 12));
        await w.kill9('a');
        await sent;
        break;
      }
      case 'record':
      case 'post': {
        const t = rng.pick(finishable);
        const latencyMs = point === 'post' ? rng.int(30, 200) : 0;
        if (latencyMs) w.slack.setLatency('chat.postMessage', latencyMs);
        const changed = bot.waitForLog('poll.changed', (l) => l.jobId === t.job.id, TRIGGER_MS);
        w.finish(t.job, rng.chance(0.25) ? 'fail' : 'complete');
        hit = (await changed) !== undefined;
        if (point === 'post') {
          const posting = () =>
            w.slack
              .callsTo('chat.postMessage')
              .some((c) => c.args.thread_ts === t.root.ts && c.args.metadata !== undefined);
          hit = hit && (await until(posting, TRIGGER_MS));
          await sleep(rng.int(0, latencyMs + 20));
        } else await sleep(rng.int(0, 8));
        await w.kill9('a');
        w.slack.setLatency('chat.postMessage', w.latency.slack);
        break;
      }
      case 'followup': {
        const t = rng.pick(threads);
        if (rng.chance(0.5)) {
          const messages = w.api.requestsTo('message').length;
          const sent = w.reply(t.root.ts);
          hit = await until(() => w.api.requestsTo('message').length > messages, TRIGGER_MS);
          await sleep(rng.int(0, 10));
          await w.kill9('a');
          await sent;
        } else {
          await w.reply(t.root.ts); // acked: from here on only the bot knows about it
          await sleep(rng.int(0, 20));
          await w.kill9('a');
        }
        break;
      }
      case 'digest': {
        digestKills++;
        const before = w.api.requestsTo('visitors').length;
        hit = await until(() => w.api.requestsTo('visitors').length > before, TRIGGER_MS);
        await sleep(rng.int(0, 300));
        await w.kill9('a');
        break;
      }
    }
    w.stats.iterations++;
    w.extra[`kill_${point}`] = Number(w.extra[`kill_${point}`] ?? 0) + 1;
    if (!hit) w.extra.missedTriggers = Number(w.extra.missedTriggers ?? 0) + 1;
    // People go on while the bot is down: jobs finish, replies land (Slack retries later).
    const down = w.jobThreads().filter((t) => w.canFinish(t.job));
    if (down.length && rng.chance(0.3)) w.finish(rng.pick(down).job);
    const replyTo = w.jobThreads().filter((t) => t.job.status !== 'archived');
    if (replyTo.length && rng.chance(0.15)) await w.reply(rng.pick(replyTo).root.ts);
  }
  await w.startBot('a', { later: true });
  return result(w, 'kill', t0, 60_000);
}

/** Channels for scenarios with many jobs: Slack paces posts per channel (about 1 a second). */
function channelFor(i: number, channels: number): string {
  return `C${String(1000 + (i % channels))}`;
}

/** Per job, time spans during which a GET for it was in flight at the service. */
export function overlappingPolls(gets: RecordedRequest[]): string[] {
  const spans = new Map<string, [number, number][]>();
  for (const r of gets) {
    const id = r.path.split('/').at(-1) ?? '';
    spans.set(id, [...(spans.get(id) ?? []), [r.at, r.answeredAt ?? r.at]]);
  }
  const bad: string[] = [];
  for (const [id, list] of spans) {
    const sorted = list.sort((a, b) => a[0] - b[0]);
    for (let i = 1; i < sorted.length; i++) {
      const [prev, cur] = [sorted[i - 1], sorted[i]];
      if (prev && cur && cur[0] < prev[1]) {
        bad.push(`job ${id} polled twice at once (${prev[0]}–${prev[1]} and ${cur[0]}–${cur[1]})`);
        break;
      }
    }
  }
  return bad;
}

/**
 * Two replicas on one PostgreSQL database; `total` jobs started through both, finishing at
 * random moments; replica b is killed with kill -9 midway and started again later (an hour
 * later, with a; the hour renews the agent budget the second half needs).
 */
export async function replicasScenario(w: ChaosWorld, total: number): Promise<ScenarioResult> {
  const t0 = Date.now();
  const rng = w.rng;
  const channels = Math.max(4, Math.ceil(total / 10));
  // A GET that takes a while widens the window in which two replicas could poll one job.
  if (w.latency.name === 'zero') w.api.setLatency('get', 40);
  await w.startBot('a');
  await w.startBot('b');
  const half = Math.min(total, 100);
  const killAt = rng.int(Math.floor(half * 0.3), Math.floor(half * 0.5));
  const restartAt = rng.int(Math.floor(half * 0.6), Math.floor(half * 0.8));
  const drive = async (from: number, to: number, kill?: number, restart?: number) => {
    for (let i = from; i < to; i++) {
      if (i === kill) {
        await w.kill9('b');
        w.stats.iterations++;
      }
      if (i === restart) await w.startBot('b');
      const live = w.liveBots();
      await w.command({ channel: channelFor(i, channels), via: rng.pick(live).name });
      for (const job of w.finishable())
        if (rng.chance(0.08)) w.finish(job, rng.chance(0.2) ? 'fail' : 'complete');
      await sleep(rng.int(0, 30));
    }
  };
  await drive(0, half, killAt, restartAt);
  // Let the survivor work alone a while, finishing jobs at random.
  for (let t = 0; t < 20; t++) {
    for (const job of w.finishable()) if (rng.chance(0.1)) w.finish(job);
    await sleep(100);
  }
  if (total > half) {
    // An hour later (see startBot), so that the budget has room for the second half.
    for (const name of ['a', 'b']) {
      const stop = await w.bots.get(name)?.terminate();
      if (stop?.code !== 0) w.extra.badExit = stop?.code ?? 'none';
    }
    await w.startBot('a');
    await w.startBot('b');
    await drive(half, total);
  }
  const more: Violation[] = overlappingPolls(w.api.requestsTo('get')).map((what) => ({
    kind: 'duplicate',
    what,
  }));
  const res = await result(w, 'replicas', t0, 180_000, more, 35_000);
  for (const name of ['a', 'b']) {
    const b = w.bots.get(name);
    if (b && !((b.events.get('poll.unchanged') ?? 0) + (b.events.get('poll.changed') ?? 0)))
      res.violations.push({
        kind: 'other',
        what: `replica ${name} never polled (after its last start)`,
      });
  }
  return res;
}

/**
 * `n` /agent commands spread over the replicas within a minute (a few seconds here): at most
 * 100 creates reach the service; everyone else is told when the next slot opens, through
 * the command's response_url (or, refused after its root was posted, in the root).
 */
export async function budgetScenario(
  w: ChaosWorld,
  n: number,
  replicas: number,
): Promise<ScenarioResult> {
  const t0 = Date.now();
  const rng = w.rng;
  // Only the budget is under test: the jobs that did start are left running.
  w.jobsMustFinish = false;
  for (let r = 0; r < replicas; r++) await w.startBot(String.fromCharCode(97 + r));
  const sends: Promise<unknown>[] = [];
  for (let i = 0; i < n; i++) {
    sends.push(w.command({ channel: channelFor(i, 12) }));
    if (sends.length === 8) await Promise.all(sends.splice(0));
    await sleep(rng.int(0, 20));
  }
  await Promise.all(sends);
  const more: Violation[] = [];
  const creates = w.api.requestsTo('create').length;
  if (creates > 100)
    more.push({ kind: 'other', what: `${creates} creates reached the service (budget 100)` });
  await until(() => w.outstanding().length === 0, 120_000, 100);
  // Refused: told when the next slot opens, to the person alone (its response_url), or in
  // a root that says so where the refusal came only after the root was posted.
  const started = new Set(w.api.createdJobs().map((j) => j.messages[0]));
  let toldAlone = 0;
  let refusedRoots = 0;
  for (const c of w.commands.filter((c) => !started.has(c.prompt))) {
    const said = w.slack.responses
      .filter((r) => r.id === c.responseId)
      .some((r) => /next slot opens at/.test(JSON.stringify(r.body)));
    const root = w.roots(c.channel).find((m) => m.text.endsWith(`: ${c.prompt}`) && !jobIdOf(m));
    if (root && /next slot opens at \d\d:\d\d UTC/.test(JSON.stringify(root.blocks)))
      refusedRoots++;
    else if (said) toldAlone++;
    else
      more.push({
        kind: 'lost',
        what: `/agent "${c.prompt}" did not start and was not told when the next slot opens`,
      });
  }
  if (w.api.createdJobs().length + toldAlone + refusedRoots !== n)
    more.push({
      kind: 'lost',
      what: `${n} commands, ${w.api.createdJobs().length} jobs, ${toldAlone + refusedRoots} told to wait`,
    });
  w.extra.creates = creates;
  w.extra.toldToWait = toldAlone + refusedRoots;
  w.extra.refusedRoots = refusedRoots;
  return result(w, 'budget', t0, 90_000, more, 35_000);
}

/**
 * API faults (5xx bursts, 429 with and without Retry-After, timeouts, malformed JSON) and
 * Slack faults (429 on chat.postMessage and chat.update, 5xx, not_in_channel) while jobs
 * run: no crash, no busy loop, no duplicate, and the other jobs finish as usual.
 */
export async function faultsScenario(w: ChaosWorld, rounds: number): Promise<ScenarioResult> {
  const t0 = Date.now();
  const rng = w.rng;
  const more: Violation[] = [];
  const bot = await w.startBot('a');
  w.slack.removeBot('C0OUT'); // /agent there: "invite me", and no job
  await w.command({ channel: 'C0OUT' });
  for (let round = 0; round < rounds; round++) {
    for (let i = 0; i < 4; i++) await w.command({ channel: channelFor(round * 4 + i, 6) });
    await sleep(300);
    const api = rng.pick([
      () => w.injectApi('get', { status: rng.pick([500, 502, 503] as const) }, 5),
      () => w.injectApi('get', { status: 429, retryAfterSec: 1 }, 2),
      () => w.injectApi('create', { status: 429 }, 1), // no Retry-After
      () => w.injectApi('create', { status: 429, retryAfterSec: 1 }, 1),
      () => w.injectApi('get', { slowMs: 2_500 }, 2), // past the poll's deadline
      () => w.injectApi('get', { malformed: true }, 3),
      () => w.injectApi('create', { malformed: true }, 1),
      () => w.injectApi('create', { status: 503 }, 1),
      () => w.injectApi('message', { status: 500 }, 1),
      () => w.injectApi('message', { reset: true }, 1),
      () => w.injectApi('message', { malformed: true }, 1),
    ]);
    api();
    const slack = rng.pick([
      () => w.injectSlack('chat.postMessage', { status: 429, retryAfterSec: 1 }, 2),
      () => w.injectSlack('chat.update', { status: 429, retryAfterSec: 1 }, 2),
      () => w.injectSlack('chat.postMessage', { status: rng.pick([500, 503] as const) }, 1),
      () => w.injectSlack('chat.update', { status: 500 }, 1),
      () => w.injectSlack('conversations.replies', { error: 'ratelimited' }, 1),
    ]);
    slack();
    for (let i = 0; i < 4; i++) await w.command({ channel: channelFor(round * 4 + i + 2, 6) });
    for (const t of w.jobThreads(channelFor(round, 6)).slice(0, 2))
      if (t.job.status !== 'archived') await w.reply(t.root.ts, { channel: channelFor(round, 6) });
    for (const job of w.finishable()) if (rng.chance(0.5)) w.finish(job);
    await sleep(rng.int(200, 800));
  }
  // A sustained outage: the service answers 503 to every poll for 3 s. The bot must back
  // off rather than spin: few requests, little CPU.
  const active = [...w.api.jobs.values()].filter((j) => j.status === 'active').length;
  w.injectApi('get', { status: 503 }, 100_000);
  const gets0 = w.api.requestsTo('get').length;
  const cpu0 = bot.cpuMs();
  const t1 = Date.now();
  await sleep(3_000);
  const cpu1 = bot.cpuMs();
  const seconds = (Date.now() - t1) / 1000;
  const getsPerSecond = (w.api.requestsTo('get').length - gets0) / seconds;
  w.api.clearFaults();
  const cpuShare = cpu0 !== null && cpu1 !== null ? (cpu1 - cpu0) / 1000 / seconds : 0;
  w.extra.outageGetsPerSecond = Math.round(getsPerSecond * 10) / 10;
  w.extra.outageCpu = `${Math.round(cpuShare * 100)}%`;
  // At most one poll per job per base interval, retries included: anything above is a loop.
  if (getsPerSecond > Math.max(1, active) * 10 + 5)
    more.push({
      kind: 'other',
      what: `busy loop: ${getsPerSecond.toFixed(1)} polls/s for ${active} active jobs during an outage`,
    });
  if (cpuShare > 0.5)
    more.push({
      kind: 'other',
      what: `busy loop: the bot used ${Math.round(cpuShare * 100)}% CPU during an outage`,
    });
  const outside =
    w.slack.ephemerals.length +
    w.slack.responses.filter((r) => JSON.stringify(r.body).includes('not a member')).length;
  if (outside === 0 || w.roots('C0OUT').length > 0)
    more.push({
      kind: 'other',
      what: '/agent in a channel without the bot: no "invite me" answer, or a root was posted',
    });
  if (!bot.alive)
    more.push({ kind: 'other', what: `the bot died under faults:\n${bot.tailText()}` });
  return result(w, 'faults', t0, 60_000, more);
}

/**
 * SIGTERM during a burst of work: the bot exits 0 within `stopLimitMs`, and the next start
 * finishes what was left.
 */
export async function sigtermScenario(
  w: ChaosWorld,
  iterations: number,
  stopLimitMs = 10_000,
): Promise<ScenarioResult> {
  const t0 = Date.now();
  const rng = w.rng;
  const more: Violation[] = [];
  for (let i = 0; i < iterations; i++) {
    const bot = await w.startBot('a');
    await w.redeliver();
    const burst: Promise<unknown>[] = [];
    for (let k = 0; k < 8; k++) burst.push(w.command({ channel: channelFor(k, 4) }));
    for (const t of w.jobThreads(channelFor(i, 4)).slice(0, 3))
      if (t.job.status !== 'archived')
        burst.push(w.reply(t.root.ts, { channel: channelFor(i, 4) }));
    for (const job of w.finishable()) if (rng.chance(0.5)) w.finish(job);
    await sleep(rng.int(20, 600));
    const { code, ms } = await bot.terminate();
    w.stats.sigterms++;
    w.stats.iterations++;
    await Promise.all(burst);
    if (code !== 0 || ms > stopLimitMs)
      more.push({
        kind: 'other',
        what: `SIGTERM ${i + 1}: exit ${code} after ${ms} ms (want 0 within ${stopLimitMs} ms)\n${bot.tailText()}`,
      });
    w.extra.maxStopMs = Math.max(Number(w.extra.maxStopMs ?? 0), ms);
  }
  await w.startBot('a', { later: true });
  return result(w, 'sigterm', t0, 60_000, more);
}
