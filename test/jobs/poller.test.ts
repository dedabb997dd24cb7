import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { MalformedResponse, NotFound, RateLimited, Unauthorized } from '../../src/api/errors.ts';
import type { Job } from '../../src/api/schemas.ts';
import { type PollerDeps, startPoller } from '../../src/jobs/poller.ts';
import { openSqliteStore } from '../../src/store/sqlite.ts';
import type { Store } from '../../src/store/types.ts';
import { memoryLogger } from '../helpers/log.ts';
import { eventually, sleep } from '../helpers/net.ts';

/** A scripted stand-in for the service's GET job: what the poller is told, in order. */
function scriptedApi(answers: (Job | Error)[]) {
  const calls: string[] = [];
  return {
    calls,
    getJob: async (id: string) => {
      calls.push(id);
      const next = answers.length > 1 ? answers.shift()! : answers[0]!;
      if (next instanceof Error) throw next;
      return next;
    },
  };
}

const job = (over: Partial<Job> = {}): Job => ({
  id: 'job_1',
  status: 'active',
  prLink: null,
  source: { repository: 'https://github.com/acme/docs', ref: 'main' },
  model: 'm',
  ...over,
});

let dir: string;
let store: Store;
beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'poller-'));
  store = await openSqliteStore(join(dir, 'bot.sqlite'));
});
afterEach(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

/** The real poller on the test's store, with fast back-off. */
const poll = (api: PollerDeps['api'], over: Partial<PollerDeps> = {}) =>
  startPoller({
    store,
    api,
    log: memoryLogger().log,
    backoff: { baseMs: 10, maxMs: 40 },
    owner: 'test-poller',
    leaseMs: 5_000,
    onChange: () => {},
    ...over,
  });

/** Waits for the poller to put an announcement in the outbox. */
const firstAnnouncement = (what: string) =>
  eventually(async () => (await store.pendingAnnouncements(Date.now(), 10))[0], what);

async function threadWith(status: 'active' | 'completed') {
  const t = await store.createThread(
    { teamId: 'T', channelId: 'C', threadTs: '1.1', userId: 'U', prompt: 'p' },
    0,
  );
  await store.attachJob(
    t.id,
    { jobId: 'job_1', status, model: 'm', repository: 'r', ref: 'main', prLink: null },
    { nextPollAt: Date.now(), pollIntervalMs: 10 },
    0,
  );
  return t;
}

it('announces a job that was already final when created', async () => {
  await threadWith('completed');
  const api = scriptedApi([job({ status: 'completed' })]);
  const poller = poll(api);
  try {
    const item = await firstAnnouncement('an announcement');
    expect(item?.announcement).toMatchObject({ kind: 'completed', prLink: null });
  } finally {
    await poller.stop();
  }
  expect(api.calls).toHaveLength(1); // final: no longer polled
});

it('backs off while nothing changes, announces a 404 once, and stops polling', async () => {
  await threadWith('active');
  const api = scriptedApi([job(), job(), job(), new NotFound('job.get', 'The job')]);
  const poller = poll(api);
  try {
    await eventually(
      async () => (await store.pendingAnnouncements(Date.now(), 10)).length === 1,
      'lost',
    );
    const t = await store.findThread('T', 'C', '1.1');
    expect(t).toMatchObject({ status: 'lost', nextPollAt: null });
    expect(t!.pollIntervalMs).toBeGreaterThan(10);
    const calls = api.calls.length;
    await new Promise((r) => setTimeout(r, 150));
    expect(api.calls).toHaveLength(calls);
  } finally {
    await poller.stop();
  }
});

it("does not take the previous round's final status as the answer to a follow-up", async () => {
  const t = await threadWith('completed');
  await store.recordPoll({
    threadId: t.id,
    round: 0,
    snapshot: null,
    schedule: { nextPollAt: null, pollIntervalMs: 10 },
    announcements: [],
    now: 0,
  });
  // A follow-up: round 1, watched again; the service still says 'completed' for a while.
  await store.startRound(
    t.id,
    { jobId: 'job_1', status: 'active', model: 'm', repository: 'r', ref: 'main', prLink: null },
    { nextPollAt: Date.now(), pollIntervalMs: 10 },
    Date.now(),
    true, // the message answer still said 'completed'
  );
  const stale = job({ status: 'completed' });
  const api = scriptedApi([
    stale,
    stale,
    stale,
    job(),
    job({ status: 'completed', prLink: 'https://x/pull/2' }),
  ]);
  const poller = poll(api, { backoff: { baseMs: 10, maxMs: 20 }, followUpGraceMs: 60_000 });
  try {
    const item = await firstAnnouncement('the round 1 announcement');
    expect(item?.announcement).toMatchObject({
      key: 'job_1:1:completed',
      prLink: 'https://x/pull/2',
    });
    expect(api.calls.length).toBeGreaterThanOrEqual(5);
  } finally {
    await poller.stop();
  }
});

it('tells the thread once when polls keep being refused, keeps polling, and tells again after a recovery', async () => {
  const t = await threadWith('active');
  const refused = new Unauthorized('job.get');
  const unreadable = new MalformedResponse('job.get', 200, 'status: Invalid option');
  // A streak of refusals, one good answer, then a streak of answers we cannot read.
  const api = scriptedApi([...Array(8).fill(refused), job(), ...Array(8).fill(unreadable), job()]);
  const poller = poll(api, { backoff: { baseMs: 10, maxMs: 20 }, troubleAfterMs: 60 });
  try {
    await eventually(() => api.calls.length >= 18, 'both streaks polled', 10_000);
  } finally {
    await poller.stop();
  }
  const notices = (await store.pendingAnnouncements(Date.now(), 10)).map((i) => i.announcement);
  expect(notices).toHaveLength(2);
  expect(notices.every((n) => n.kind === 'notice' && n.key.startsWith('job_1:0:trouble:'))).toBe(
    true,
  );
  expect(notices[0]?.detail).toMatch(/can't check on this job.*MINTLIFY_API_KEY/);
  expect(notices[1]?.detail).toContain('could not read');
  // Still watched, and no longer counted as failing after the last good answer.
  expect(await store.getThread(t.id)).toMatchObject({ status: 'active', pollFailingSince: null });
  expect((await store.getThread(t.id))?.nextPollAt).not.toBeNull();
});

/**
 * The service's GET job, answered by the test: each call stays in flight until the test
 * settles it, or until its caller aborts it (a stop, a deadline), as with the real client.
 * Jobs in `auto` answer by themselves, a moment later.
 */
function manualApi(clock: () => number = Date.now) {
  const inFlight = new Map<string, { resolve: (j: Job) => void; reject: (e: unknown) => void }>();
  const calls: { id: string; at: number }[] = [];
  const auto = new Map<string, Job>();
  let most = 0;
  return {
    calls,
    inFlight,
    auto,
    mostAtOnce: () => most,
    getJob(id: string, opts: { signal?: AbortSignal } = {}): Promise<Job> {
      calls.push({ id, at: clock() });
      return new Promise<Job>((resolve, reject) => {
        inFlight.set(id, { resolve, reject });
        most = Math.max(most, inFlight.size);
        opts.signal?.addEventListener('abort', () => reject(opts.signal?.reason), { once: true });
        const answer = auto.get(id);
        if (answer) setImmediate(() => resolve(answer));
      }).finally(() => inFlight.delete(id));
    },
    answer(id: string, with_: Job | Error) {
      const call = inFlight.get(id);
      if (!call) throw new Error(`no GET of ${id} in flight`);
      if (with_ instanceof Error) call.reject(with_);
      else call.resolve(with_);
    },
  };
}

/** A watched job, due at `due`; `movedAt` is when it was attached (its last change). */
async function watched(
  jobId: string,
  due: number,
  o: { movedAt?: number; intervalMs?: number; teamId?: string; projectId?: string } = {},
) {
  const t = await store.createThread(
    {
      teamId: o.teamId ?? 'T',
      channelId: 'C',
      threadTs: `ts-${jobId}`,
      userId: 'U',
      prompt: 'p',
      ...(o.projectId ? { projectId: o.projectId } : {}),
    },
    o.movedAt ?? 0,
  );
  await store.attachJob(
    t.id,
    { jobId, status: 'active', model: 'm', repository: 'r', ref: 'main', prLink: null },
    { nextPollAt: due, pollIntervalMs: o.intervalMs ?? 1_000 },
    o.movedAt ?? 0,
  );
  return t.id;
}

const activeJob = (id: string) => job({ id, source: { repository: 'r', ref: 'main' }, model: 'm' });

it('keeps polling and recording other jobs while one GET hangs', async () => {
  const hung = await watched('job_hang', Date.now() - 10);
  const others = ['job_a', 'job_b', 'job_c', 'job_d', 'job_e'];
  for (const id of others) await watched(id, Date.now(), { intervalMs: 60_000 });
  const api = manualApi();
  for (const id of others) api.auto.set(id, activeJob(id));
  // A long lease: nothing but the stop ends the hanging GET.
  const poller = poll(api, {
    concurrency: 2,
    leaseMs: 600_000,
    backoff: { baseMs: 60_000, maxMs: 60_000 },
  });
  try {
    await eventually(async () => {
      const threads = await Promise.all(others.map((id) => store.findThread('T', 'C', `ts-${id}`)));
      return threads.every((t) => t!.nextPollAt! > Date.now() + 1_000);
    }, 'the other jobs polled and recorded');
    expect([...api.inFlight.keys()]).toEqual(['job_hang']);
    expect(api.calls[0]?.id).toBe('job_hang');
    expect(api.mostAtOnce()).toBe(2);
  } finally {
    await poller.stop();
  }
  // Cut short by the stop: nothing recorded for it, polled again after the restart.
  expect((await store.getThread(hung))?.nextPollAt).toBeLessThan(Date.now());
});

it('never polls more jobs at once than its concurrency', async () => {
  const ids = Array.from({ length: 20 }, (_, i) => `job_${i}`);
  for (const id of ids) await watched(id, Date.now());
  const api = manualApi();
  for (const id of ids) api.auto.set(id, activeJob(id));
  const poller = poll(api, { concurrency: 3, backoff: { baseMs: 60_000, maxMs: 60_000 } });
  try {
    await eventually(() => new Set(api.calls.map((c) => c.id)).size === 20, 'every job polled');
  } finally {
    await poller.stop();
  }
  expect(api.mostAtOnce()).toBe(3);
});

it("pauses its project's polls after a 429 until its Retry-After, then goes on", async () => {
  let clock = 1_000_000;
  const now = () => clock;
  const limited = await watched('job_a', clock - 2);
  const b = await watched('job_b', clock - 1);
  const c = await watched('job_c', clock);
  const api = manualApi(now);
  const logs = memoryLogger();
  const pauses: number[] = [];
  const metrics = {
    jobCreated() {},
    followUp() {},
    poll() {},
    announcement() {},
    pollsPaused: (ms: number) => pauses.push(ms),
  };
  const poller = poll(api, { concurrency: 1, now, log: logs.log, metrics });
  try {
    await eventually(() => api.inFlight.has('job_a'), 'the first poll');
    api.answer('job_a', new RateLimited('job.get', 30_000));
    await eventually(
      async () => (await store.getThread(limited))!.nextPollAt! > clock,
      'the 429 recorded',
    );
    expect((await store.getThread(limited))?.nextPollAt).toBeGreaterThanOrEqual(clock + 30_000);
    // The same project's other jobs are given back, due when the wait ends, never asked.
    await eventually(async () => {
      const due = await Promise.all([b, c].map(async (id) => (await store.getThread(id))!));
      return due.every((t) => t.nextPollAt === clock + 30_000);
    }, 'the project put off');
    // However often the poller is woken inside the pause, it asks nothing.
    for (const at of [clock + 1_000, clock + 15_000, clock + 29_999]) {
      clock = at;
      poller.kick();
      await sleep(30);
    }
    expect(api.calls.map((c) => c.id)).toEqual(['job_a']);
    clock = 1_000_000 + 30_000;
    poller.kick();
    // All three fall due as the wait ends, and are polled one after the other.
    for (let i = 0; i < 3; i++) {
      const id = await eventually(() => [...api.inFlight.keys()][0], 'polling again');
      api.answer(id, activeJob(id));
      await eventually(() => !api.inFlight.has(id), 'answered');
    }
  } finally {
    await poller.stop();
  }
  expect(api.calls.slice(1).every((c) => c.at >= 1_030_000)).toBe(true);
  expect(
    api.calls
      .slice(1)
      .map((c) => c.id)
      .sort(),
  ).toEqual(['job_a', 'job_b', 'job_c']);
  expect(pauses).toEqual([30_000]);
  expect(logs.lines().filter((l) => l.msg === 'poll.rate_limited')).toHaveLength(1);
});

it("keeps polling other workspaces' projects while one project waits out a 429", async () => {
  let clock = 1_000_000;
  const now = () => clock;
  await watched('job_a1', clock - 3, { teamId: 'TA', projectId: 'proj_a' });
  await watched('job_a2', clock - 2, { teamId: 'TA', projectId: 'proj_a' });
  await watched('job_b1', clock - 1, { teamId: 'TB', projectId: 'proj_b' });
  const api = manualApi(now);
  const poller = poll(api, { concurrency: 1, now, backoff: { baseMs: 60_000, maxMs: 60_000 } });
  try {
    await eventually(() => api.inFlight.has('job_a1'), 'the first poll');
    api.answer('job_a1', new RateLimited('job.get', 30_000));
    // Inside A's pause, B's job is asked; A's other job is not.
    await eventually(() => api.inFlight.has('job_b1'), "the other workspace's job polled");
    api.answer('job_b1', activeJob('job_b1'));
    clock += 1_000;
    poller.kick();
    await sleep(50);
    expect(api.calls.map((c) => c.id)).toEqual(['job_a1', 'job_b1']);
  } finally {
    await poller.stop();
  }
});

it("polls a quiet workspace's due job in its turn, not after a busy workspace's backlog", async () => {
  const due = Date.now() - 1_000;
  const busy = Array.from({ length: 40 }, (_, i) => `job_busy_${i}`);
  for (const [i, id] of busy.entries()) await watched(id, due + i, { teamId: 'TBUSY' });
  await watched('job_quiet', due + 100, { teamId: 'TQUIET' });
  const api = manualApi();
  for (const id of [...busy, 'job_quiet']) api.auto.set(id, activeJob(id));
  const poller = poll(api, { concurrency: 2, backoff: { baseMs: 60_000, maxMs: 60_000 } });
  try {
    await eventually(() => api.calls.some((c) => c.id === 'job_quiet'), 'the quiet job polled');
  } finally {
    await poller.stop();
  }
  // In the first claim, beside the busy workspace's oldest: not the 41st.
  expect(api.calls.findIndex((c) => c.id === 'job_quiet')).toBeLessThan(2);
});

it('records outcomes that end together in one batch, fencing each on its own', async () => {
  const kept = await watched('job_x', Date.now());
  const followed = await watched('job_y', Date.now());
  const api = manualApi();
  const batches: { size: number; recorded: boolean[] }[] = [];
  const watching = {
    ...store,
    recordPolls: async (ps: Parameters<Store['recordPolls']>[0]) => {
      const recorded = await store.recordPolls(ps);
      batches.push({ size: ps.length, recorded });
      return recorded;
    },
  };
  const outcomes: string[] = [];
  const metrics = {
    jobCreated() {},
    followUp() {},
    announcement() {},
    pollsPaused() {},
    poll: (o: string) => outcomes.push(o),
  };
  const poller = poll(api, { store: watching, concurrency: 2, metrics });
  try {
    await eventually(() => api.inFlight.size === 2, 'both polls in flight');
    // A follow-up starts round 1 of job_y while its poll of round 0 is in flight.
    const next = Date.now() + 60_000;
    await store.startRound(
      followed,
      { jobId: 'job_y', status: 'active', model: 'm', repository: 'r', ref: 'main', prLink: null },
      { nextPollAt: next, pollIntervalMs: 10 },
      Date.now(),
      true,
    );
    const done = (id: string) => job({ id, status: 'completed', prLink: `https://x/pull/${id}` });
    api.answer('job_x', done('job_x'));
    api.answer('job_y', done('job_y'));
    await eventually(() => batches.length > 0, 'the batch');
    expect(batches[0]).toEqual({ size: 2, recorded: [true, false] });
    expect(await store.getThread(followed)).toMatchObject({
      round: 1,
      status: 'active',
      nextPollAt: next,
    });
    expect(await store.getThread(kept)).toMatchObject({ status: 'completed', nextPollAt: null });
    const pending = await store.pendingAnnouncements(Date.now(), 10);
    expect(pending.map((p) => p.announcement.key)).toEqual(['job_x:0:completed']);
  } finally {
    await poller.stop();
  }
  expect(outcomes.sort()).toEqual(['changed', 'superseded']);
});

it('keeps a fresh job on the first delay, and backs an older one off', async () => {
  const clock = 10_000_000;
  const fresh = await watched('job_new', clock, { movedAt: clock - 5_000 }); // fresh for 12 s at a 1 s base
  const old = await watched('job_old', clock, { movedAt: clock - 11 * 60_000 });
  const api = manualApi();
  for (const id of ['job_new', 'job_old']) api.auto.set(id, activeJob(id));
  const poller = poll(api, {
    now: () => clock,
    backoff: { baseMs: 1_000, maxMs: 60_000 },
  });
  try {
    await eventually(async () => (await store.getThread(old))!.nextPollAt! > clock, 'both polled');
    await eventually(
      async () => (await store.getThread(fresh))!.nextPollAt! > clock,
      'both polled',
    );
  } finally {
    await poller.stop();
  }
  expect((await store.getThread(fresh))?.pollIntervalMs).toBe(1_000);
  expect((await store.getThread(old))?.pollIntervalMs).toBe(1_500);
});
