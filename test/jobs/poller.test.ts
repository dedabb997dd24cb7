import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { MalformedResponse, NotFound, Unauthorized } from '../../src/api/errors.ts';
import type { Job } from '../../src/api/schemas.ts';
import { startPoller } from '../../src/jobs/poller.ts';
import { openSqliteStore } from '../../src/store/sqlite.ts';
import type { Store } from '../../src/store/types.ts';
import { memoryLogger } from '../helpers/log.ts';
import { eventually } from '../helpers/net.ts';

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
const poll = (
  api: ReturnType<typeof scriptedApi>,
  over: Partial<Parameters<typeof startPoller>[0]> = {},
) =>
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
