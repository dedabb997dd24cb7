import { afterEach, describe, expect, it } from 'vitest';
import type { RecordedRequest } from '../fakes/api-emulator.ts';
import { CHANNEL, Harness, USER } from '../helpers/harness.ts';
import { eventually } from '../helpers/net.ts';
import { postgresAvailable } from '../helpers/postgres.ts';

const JOBS = 150;
const GET_MS = 500;
/** The bot's poll request timeout (POLL_INTERVAL_MS). */
const GIVE_UP_MS = 2_000;

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

/** The emulator's view: how many GETs were in flight as each one arrived (itself included). */
function watchInFlight(api: Harness['api']): number[] {
  const open = new Set<RecordedRequest>();
  const seen: number[] = [];
  api.onRequest((r) => {
    if (r.kind !== 'get') return;
    // Answered, or given up by the bot (its GETs time out after 2 s here): no longer in flight.
    for (const o of open) if (o.answeredAt !== null || r.at - o.at > GIVE_UP_MS) open.delete(o);
    open.add(r);
    seen.push(open.size);
  });
  return seen;
}

/** `JOBS` active jobs in the database and the emulator, all due now, as after a restart. */
async function seedDueJobs(harness: Harness): Promise<void> {
  const store = await harness.openStore();
  try {
    const now = Date.now();
    for (let i = 0; i < JOBS; i++) {
      const id = `job_due_${i}`;
      harness.api.setJob(id, {});
      const t = await store.createThread(
        { teamId: 'T1', channelId: CHANNEL, threadTs: `${now}.${i}`, userId: USER, prompt: 'p' },
        now,
      );
      await store.attachJob(
        t.id,
        { jobId: id, status: 'active', model: 'm', repository: 'r', ref: 'main', prLink: null },
        { nextPollAt: now, pollIntervalMs: 2_000 },
        now,
      );
    }
  } finally {
    await store.close();
  }
}

const peak = (xs: number[]) => xs.reduce((a, b) => Math.max(a, b), 0);
const engines = postgresAvailable ? (['sqlite', 'postgres'] as const) : (['sqlite'] as const);

/** The real bot on `JOBS` due jobs at a slow API, once its pool is well past 16 wide. */
async function widened(engine: 'sqlite' | 'postgres') {
  h = await Harness.create({
    engine,
    env: { POLL_INTERVAL_MS: '2000', POLL_MAX_INTERVAL_MS: '4000', POLL_CONCURRENCY_MAX: '64' },
  });
  const harness = h;
  await seedDueJobs(harness);
  // 75 polls a second at 500 ms a GET: 38 in flight; 16 slots answer 32 a second.
  harness.api.setLatency('get', GET_MS);
  const inFlight = watchInFlight(harness.api);
  await harness.start();
  await eventually(() => peak(inFlight) > 20, 'well over 16 GETs in flight at once', 15_000);
  return { harness, inFlight };
}

describe.each(engines)('the poll pool (%s)', (engine) => {
  it('widens the poll pool past 16 when many jobs are due at a slow API, and narrows it on 429s', async () => {
    const { harness, inFlight } = await widened(engine);

    // The API starts refusing: every GET answers 429 (Retry-After 1 s). Each pause halves the pool.
    harness.api.inject('get', { status: 429, retryAfterSec: 1 }, 1_000_000);
    const pauses = () => harness.logLines().filter((l) => l.msg === 'poll.rate_limited');
    await eventually(() => pauses().length >= 3, 'three pauses for 429s', 15_000);
    const widths = pauses().map((l) => Number(l.width));
    expect(widths.slice(1).every((w, i) => w < (widths[i] ?? 0))).toBe(true);
    const narrow = widths.at(-1) ?? 0;
    expect(narrow).toBeLessThanOrEqual(Math.floor((widths[0] ?? 0) / 4));
    expect(harness.logLines().some((l) => l.msg === 'poll.narrowed')).toBe(true);

    // Healthy again: the pool comes back a little at a time, not all at once: its cap grows
    // by a tenth (at least one) each healthy second, so however slow this machine is, the
    // next 40 GETs see no more than that growth over the seconds they took.
    const wide = peak(inFlight);
    harness.api.clearFaults();
    const from = inFlight.length;
    const healedAt = Date.now();
    await eventually(() => inFlight.length >= from + 40, 'polling again', 15_000);
    const after = peak(inFlight.slice(from, from + 40));
    let bound = narrow;
    for (let s = 0; s <= Math.ceil((Date.now() - healedAt) / 1_000); s++)
      bound += Math.max(1, Math.ceil(bound / 10));
    expect(after).toBeLessThanOrEqual(bound);
    expect(after).toBeLessThan(wide);
  });

  it('narrows the pool when the API slows down well past its usual latency', async () => {
    const { harness } = await widened(engine);
    const narrowed = () =>
      harness.logLines().filter((l) => l.msg === 'poll.narrowed' && Number(l.latencyMs) >= 1_000);
    // Struggling: answers take 1.8 s (the bot's GETs give up at 2 s). More polls in flight
    // would keep the rate up, and pile onto it.
    harness.api.setLatency('get', 1_800);
    const cut = await eventually(() => narrowed()[0], 'the pool narrowed for latency', 15_000);
    expect(Number(cut.cap)).toBeLessThan(64);
    expect(Number(cut.latencyMs)).toBeGreaterThan(2 * Number(cut.baselineMs));
  });
});
