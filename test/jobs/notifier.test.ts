import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { ChatError } from '../../src/chat-errors.ts';
import type { Loop } from '../../src/jobs/loop.ts';
import { FULL_PASS_GAP_MS, startNotifier } from '../../src/jobs/notifier.ts';
import type { JobChat } from '../../src/jobs/ports.ts';
import { openSqliteStore } from '../../src/store/sqlite.ts';
import type { Announcement, JobThread, Store } from '../../src/store/types.ts';
import { manualClock, settle } from '../helpers/clock.ts';
import { memoryLogger } from '../helpers/log.ts';
import { eventually, sleep } from '../helpers/net.ts';

/** A stand-in for Slack that records what the notifier asked for, and can refuse or stall. */
function recordingChat() {
  const shown: JobThread[] = [];
  const announced: Announcement[] = [];
  /** Errors the next chat.update calls throw, in order. */
  const updateFaults: Error[] = [];
  /** While set, chat.postMessage calls wait for it. */
  let postsHeld: Promise<void> | undefined;
  const chat: JobChat = {
    postRoot: async () => ({ ts: '1.1' }),
    findRoot: async () => null,
    showJob: async (t) => {
      const fault = updateFaults.shift();
      if (fault) throw fault;
      shown.push(t);
    },
    announce: async (_t, a) => {
      await postsHeld;
      announced.push(a);
    },
    hasAnnounced: async () => false,
    acknowledgeReply: async () => {},
    tellUser: async () => {},
  };
  const holdPosts = () => {
    let release = () => {};
    postsHeld = new Promise<void>((r) => {
      release = () => {
        postsHeld = undefined;
        r();
      };
    });
    return release;
  };
  return { chat, shown, announced, updateFaults, holdPosts };
}

let dir: string;
let store: Store;
const loops: Loop[] = [];
beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'notifier-'));
  store = await openSqliteStore(join(dir, 'bot.sqlite'));
});
afterEach(async () => {
  for (const l of loops.splice(0)) await l.stop();
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

let seq = 0;
/** A running job whose root already shows it running. */
async function runningJob(channelId: string): Promise<JobThread> {
  const i = ++seq;
  const t = await store.createThread(
    { teamId: 'T', channelId, threadTs: `${i}.1`, userId: 'U', prompt: 'p' },
    0,
  );
  await store.attachJob(
    t.id,
    { jobId: `j${i}`, status: 'active', model: null, repository: null, ref: null, prLink: null },
    { nextPollAt: null, pollIntervalMs: 1 },
    0,
  );
  const claimed = await store.claimRootUpdate(t.id, 0, { owner: 'setup', until: 1 });
  await store.markRootShown(t.id, claimed!.rootVersion, 'setup');
  return (await store.getThread(t.id))!;
}

/** The job finishes: its root changes and its completion goes into the outbox. */
async function finish(t: JobThread, kind: 'completed' | 'notice' = 'completed'): Promise<string> {
  const key = `${t.jobId}:0:${kind}`;
  await store.recordPoll({
    threadId: t.id,
    round: 0,
    snapshot:
      kind === 'completed'
        ? {
            jobId: t.jobId!,
            status: 'completed',
            model: null,
            repository: null,
            ref: null,
            prLink: null,
          }
        : null,
    schedule: { nextPollAt: null, pollIntervalMs: 1 },
    announcements: [{ key, kind, prLink: null, detail: kind === 'notice' ? 'hello' : null }],
    now: 0,
  });
  return key;
}

/** A `/agent` the service refused (the budget is spent): its root must say so. */
async function refusedStart(channelId: string): Promise<JobThread> {
  const t = await store.createThread(
    { teamId: 'T', channelId, threadTs: `${++seq}.1`, userId: 'U', prompt: 'p' },
    0,
  );
  await store.startFailed(t.id, 'the agent budget is spent', 0);
  return t;
}

function notifier(
  chat: JobChat,
  o: Partial<Parameters<typeof startNotifier>[0]> = {},
): Loop & { time: ReturnType<typeof manualClock> } {
  const time = manualClock();
  const n = startNotifier({
    store,
    chat,
    log: memoryLogger().log,
    owner: 'n1',
    leaseMs: 30_000,
    clock: time.clock,
    ...o,
  });
  loops.push(n);
  return Object.assign(n, { time });
}

/** Lets the notifier run (fetches, queries, calls) until `done`; no clock is involved. */
async function until(done: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 500 && !done(); i++) await settle(1);
  if (!done()) throw new Error(`never happened: ${what}`);
}

const keys = (as: Announcement[]) => as.map((a) => a.key);

it('works through a backlog larger than its queues without waiting for a kick', async () => {
  const n = 65; // more than the root queue, and more per channel than a channel's queue
  const threads: JobThread[] = [];
  for (let i = 0; i < n; i++) threads.push(await runningJob(`C${i % 7}`));
  for (const t of threads) await finish(t);
  const { chat, shown, announced } = recordingChat();
  const real = startNotifier({
    store,
    chat,
    log: memoryLogger().log,
    owner: 'n1',
    leaseMs: 5_000,
    channelGapMs: 0,
    updateLimit: { perMinute: 600_000, burst: 100 },
  });
  loops.push(real);
  // The loop's idle wait is 30 s: finishing in a few seconds means it never waited for one.
  await eventually(() => shown.length === n && announced.length === n, 'everything', 5_000);
  expect(new Set(shown.map((t) => t.id)).size).toBe(n);
  expect(new Set(keys(announced)).size).toBe(n);
});

it('runs the passes that changes set off at most every FULL_PASS_GAP_MS while its queues are full', async () => {
  // One channel's backlog, more than its queue holds, and Slack holding every post: each
  // pass finds the queues full. A burst of polls tells it of a change every few milliseconds.
  const threads: JobThread[] = [];
  for (let i = 0; i < 30; i++) threads.push(await runningJob('C1'));
  for (const t of threads) await finish(t);
  const { chat, announced, holdPosts } = recordingChat();
  const release = holdPosts();
  let passes = 0;
  const counting: Store = {
    ...store,
    pendingRootUpdates: (...a) => {
      passes++;
      return store.pendingRootUpdates(...a);
    },
  };
  const n = startNotifier({
    store: counting,
    chat,
    log: memoryLogger().log,
    owner: 'n1',
    leaseMs: 30_000,
    channelGapMs: 0,
  });
  loops.push(n);
  await eventually(() => passes >= 1, 'a first pass');
  await sleep(50);
  const before = passes;
  const started = performance.now();
  for (let i = 0; i < 100; i++) {
    n.changed();
    await sleep(10);
  }
  const elapsed = performance.now() - started;
  // Without the gap each change runs a pass of its own (about a hundred in this second).
  expect(passes - before).toBeLessThanOrEqual(Math.ceil(elapsed / FULL_PASS_GAP_MS) + 1);
  expect(passes - before).toBeGreaterThanOrEqual(2);
  release();
  await eventually(() => announced.length === 30, 'every announcement', 10_000);
});

it('tops its root queue up as it drains, without a kick', async () => {
  const threads: JobThread[] = [];
  for (let i = 0; i < 60; i++) threads.push(await runningJob(`C${i}`));
  for (const t of threads) await finish(t);
  const { chat, shown } = recordingChat();
  // The queue takes 50; the ten left over must be fetched once it has room again.
  const { time } = notifier(chat, { updateLimit: { perMinute: 60, burst: 5 } });
  await until(() => shown.length === 4, 'the first burst');
  await time.advance(60_000);
  // Each edit made looks again once done (a change may have come meanwhile), so the queue
  // is topped up as it drains; at the latest, the loop's own wait of a second brings the
  // rest in (the idle wait is 30 s).
  expect(shown.length).toBeGreaterThanOrEqual(54);
  await eventually(
    async () => {
      await time.advance(1_000);
      return shown.length === 60;
    },
    'the rest',
    5_000,
  );
  expect(new Set(shown.map((t) => t.id)).size).toBe(60);
});

it("does not let one channel's backlog delay another channel's first announcement", async () => {
  const busy = [];
  for (let i = 0; i < 5; i++) busy.push(await finish(await runningJob('CA')));
  const lone = await finish(await runningJob('CB'));
  const { chat, announced } = recordingChat();
  const { time } = notifier(chat);
  await until(() => announced.length === 2, 'two announcements');
  await settle(50);
  expect(keys(announced)).toEqual([busy[0], lone]);
  await time.advance(1_000);
  await until(() => announced.length === 3, 'the next one in the busy channel');
  expect(keys(announced)[2]).toBe(busy[1]);
});

it('shows a refused start before the announcements and root edits queued ahead of it', async () => {
  const finished = [];
  for (let i = 0; i < 10; i++) finished.push(await runningJob('CA'));
  for (const t of finished) await finish(t);
  const { chat, shown, announced } = recordingChat();
  const n = notifier(chat); // Tier 3: a burst of five, one kept for answers
  await until(() => shown.length === 4 && announced.length === 1, 'the first of the backlog');
  const refused = await refusedStart('CA');
  n.kick(); // as the job service does
  await until(() => shown.length === 5, 'the refusal');
  expect(shown[4]).toMatchObject({ id: refused.id, status: 'start_failed' });
  // The clock has not moved: the other six edits and nine posts are still waiting.
  await settle(50);
  expect([shown.length, announced.length]).toEqual([5, 1]);
});

it('posts a notice (an answer to a person) next in a channel with a backlog', async () => {
  const busy = [];
  for (let i = 0; i < 4; i++) busy.push(await finish(await runningJob('CA')));
  const { chat, announced } = recordingChat();
  const n = notifier(chat);
  await until(() => announced.length === 1, 'the first announcement');
  const notice = await finish(await runningJob('CA'), 'notice');
  n.kick();
  await settle(50);
  await n.time.advance(1_000);
  await until(() => announced.length === 2, 'the next post');
  expect(keys(announced)).toEqual([busy[0], notice]);
});

it('pauses root edits for a 429 Retry-After while announcements keep flowing', async () => {
  const jobs = [];
  for (const c of ['CA', 'CA', 'CA', 'CB', 'CC']) jobs.push(await runningJob(c));
  for (const t of jobs) await finish(t);
  const { chat, shown, announced, updateFaults } = recordingChat();
  updateFaults.push(new ChatError('ratelimited', { retryable: true, retryAfterMs: 30_000 }));
  // One edit at a time, so that the others are still queued when the 429 comes.
  const n = notifier(chat, { updateLimit: { perMinute: 60, burst: 2 } });
  await until(() => announced.length === 3, 'the first post of each channel');
  await n.time.advance(10_000);
  await until(() => announced.length === 5, 'the rest of CA');
  expect(shown).toEqual([]); // tokens refilled long ago, but chat.update is paused
  await n.time.advance(20_000);
  await until(() => shown.length === 1, 'the first queued edit, once the pause is over');
  n.kick(); // the deferred one's lease has ended with the pause: fetched again
  await settle(50);
  await n.time.advance(10_000);
  await until(() => shown.length === 5, 'the deferred edit');
  expect(new Set(shown.map((t) => t.id)).size).toBe(5);
});

it("pauses only its channel's posts for a 429 on an announcement", async () => {
  const jobs = [];
  for (const c of ['CA', 'CA', 'CB', 'CB']) jobs.push(await runningJob(c));
  for (const t of jobs) await finish(t);
  const { chat, announced } = recordingChat();
  const posted: string[] = [];
  const announce = chat.announce;
  let refused = false;
  chat.announce = async (t, a) => {
    if (t.channelId === 'CA' && !refused) {
      refused = true;
      throw new ChatError('ratelimited', { retryable: true, retryAfterMs: 30_000 });
    }
    await announce(t, a);
    posted.push(t.channelId);
  };
  const n = notifier(chat);
  await until(() => refused && posted.length === 1, "CA refused, CB's first post");
  await n.time.advance(1_000);
  // chat.postMessage is limited per channel: CB goes on at its pace while CA waits.
  await until(() => posted.length === 2, "CB's second post");
  await n.time.advance(10_000);
  await settle(50);
  expect(posted).toEqual(['CB', 'CB']);
  await n.time.advance(20_000);
  n.kick();
  await settle(50);
  await n.time.advance(1_000);
  await until(() => posted.length === 4, "CA's posts, once its pause is over");
  expect(announced).toHaveLength(4);
});

it('leases an announcement only as it is sent, and never queues one twice', async () => {
  const busy = [];
  for (let i = 0; i < 3; i++) busy.push(await finish(await runningJob('CA')));
  const { chat, announced } = recordingChat();
  const n = notifier(chat);
  await until(() => announced.length === 1, 'the first announcement');
  for (let i = 0; i < 3; i++) {
    n.kick();
    await settle(20);
  }
  // Waiting in the queue, the other two are not leased: another replica could take them.
  const pending = await store.pendingAnnouncements(n.time.now(), 10);
  expect(pending.map((p) => [p.announcement.key, p.attempts])).toEqual([
    [busy[1], 0],
    [busy[2], 0],
  ]);
  await n.time.advance(2_000);
  await until(() => announced.length === 3, 'all three');
  await settle(50);
  expect(keys(announced)).toEqual(busy);
});

it('never posts an item twice with two notifiers on one database', async () => {
  const all = [];
  for (const c of ['CA', 'CB', 'CC', 'CD'])
    for (let i = 0; i < 3; i++) all.push(await finish(await runningJob(c)));
  const { chat, shown, announced } = recordingChat();
  const time = manualClock();
  const start = (owner: string) =>
    startNotifier({
      store,
      chat,
      log: memoryLogger().log,
      owner,
      leaseMs: 30_000,
      clock: time.clock,
    });
  const [a, b] = [start('n1'), start('n2')];
  loops.push(a, b);
  for (let s = 0; s < 4; s++) {
    a.kick();
    b.kick();
    await settle(50);
    await time.advance(1_000);
  }
  await until(() => announced.length === all.length && shown.length === all.length, 'everything');
  await settle(50);
  expect(keys(announced).sort()).toEqual([...all].sort());
  expect(new Set(shown.map((t) => t.id)).size).toBe(shown.length);
});

it('stops once the calls in flight are done, and leaves nothing half-done', async () => {
  const busy = [];
  for (let i = 0; i < 3; i++) busy.push(await finish(await runningJob('CA')));
  const { chat, announced, holdPosts } = recordingChat();
  const release = holdPosts();
  const n = notifier(chat);
  await settle(50);
  let stopped = false;
  const stopping = n.stop().then(() => {
    stopped = true;
  });
  await settle(50);
  expect(stopped).toBe(false); // the first post is still in flight
  release();
  await stopping;
  expect(keys(announced)).toEqual([busy[0]]);
  // It was marked sent; the two that waited in the queue were never touched.
  const pending = await store.pendingAnnouncements(n.time.now(), 10);
  expect(pending.map((p) => [p.announcement.key, p.attempts])).toEqual([
    [busy[1], 0],
    [busy[2], 0],
  ]);
  await n.time.advance(5_000);
  expect(announced).toHaveLength(1);
});
