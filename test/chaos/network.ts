import { sleep } from '../helpers/net.ts';
import type { Violation } from './checks.ts';
import { result, type ScenarioResult } from './scenarios.ts';
import type { ChaosWorld } from './world.ts';
import type { Link } from './world-setup.ts';

const FAULTS = ['delay', 'blackhole', 'reset'] as const;
type NetFault = (typeof FAULTS)[number];

/** Channels the scenario's commands are spread over (Slack paces posts per channel). */
const CHANNELS = 4;

/**
 * Breaks one link for a while: extra delay on every chunk, a black hole (nothing passes,
 * nothing closes) healed after a few seconds, on the database sometimes as a failover (the
 * held connections never come back), or a reset of every open connection. Returns what it
 * did and how to end it.
 */
function breakLink(
  w: ChaosWorld,
  link: Link,
  fault: NetFault,
): { holdMs: number; heal: () => void; what: string } {
  const rng = w.rng;
  const p = link.proxy;
  if (fault === 'delay') {
    // The database is a few hops away at worst; the API is across the internet.
    const ms = link.name === 'db' ? rng.int(20, 200) : rng.int(100, 800);
    p.delay(ms);
    return { holdMs: rng.int(1_500, 3_000), heal: () => p.heal(), what: `delay ${ms} ms` };
  }
  if (fault === 'blackhole') {
    const strand = link.name === 'db' && rng.chance(0.5);
    p.blackhole();
    return {
      holdMs: rng.int(1_000, 4_000),
      heal: () => p.heal({ strand }),
      what: strand ? 'black hole, then failover' : 'black hole',
    };
  }
  // A reset lands in the middle of the work below, not before it.
  const atMs = rng.int(50, 600);
  const timer = setTimeout(() => p.reset(), atMs);
  return { holdMs: atMs + 200, heal: () => clearTimeout(timer), what: `reset at ${atMs} ms` };
}

/**
 * One thing a person does: an /agent in one of the channels, or a reply in a thread there
 * is; and jobs finish now and then, as they do.
 */
async function someoneActs(w: ChaosWorld, step: number): Promise<void> {
  const rng = w.rng;
  for (const job of w.finishable())
    if (rng.chance(0.3)) w.finish(job, rng.chance(0.2) ? 'fail' : 'complete');
  const channel = `C${1000 + (step % CHANNELS)}`;
  const open = w.jobThreads(channel).filter((t) => t.job.status !== 'archived');
  if (open.length && rng.chance(0.5)) await w.reply(rng.pick(open).root.ts, { channel });
  else await w.command({ channel });
}

/**
 * Network faults on the links the bot depends on, at realistic latency: each round breaks
 * the API link or (PostgreSQL) the database link with a delay, a black hole of a few
 * seconds or a reset, while people go on sending /agent and replies and jobs finish; then
 * heals it. On SQLite only the API link has a network. In the end everything must be
 * finished, said exactly once, and every reply received once or reported uncertain.
 */
export async function networkScenario(w: ChaosWorld, rounds: number): Promise<ScenarioResult> {
  const t0 = Date.now();
  const rng = w.rng;
  const more: Violation[] = [];
  const bot = await w.startBot('a');
  let step = 0;
  for (let round = 0; round < rounds; round++) {
    // Some healthy work first, so that there are threads to reply in.
    await someoneActs(w, step++);
    const link = rng.pick(w.links);
    const fault = rng.pick(FAULTS);
    const t = breakLink(w, link, fault);
    w.stats.netFaults++;
    w.stats.iterations++;
    const key = `${link.name}_${fault}`;
    w.extra[key] = Number(w.extra[key] ?? 0) + 1;
    const until = Date.now() + t.holdMs;
    // Each person waits for Slack's ack (3 s at most); several are under way at once.
    const acts: Promise<void>[] = [];
    while (Date.now() < until) {
      acts.push(someoneActs(w, step++));
      await sleep(rng.int(300, 900));
    }
    t.heal();
    await Promise.all(acts);
    // Slack retries an event that was not acked at once, then after a minute and five: the
    // first retry here, once the link is back.
    await w.redeliver();
    await sleep(rng.int(300, 1_000));
  }
  for (const l of w.links) l.proxy.heal();
  if (!bot.alive)
    more.push({ kind: 'other', what: `the bot died under network faults:\n${bot.tailText()}` });
  return result(w, 'network', t0, 60_000, more);
}
