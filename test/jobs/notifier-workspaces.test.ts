/**
 * The real notifier in distributed mode (each workspace posts with its own token, within its
 * own limits) on a real store, both engines, against a stand-in for Slack whose calls take
 * time: one workspace's burst or 429 does not hold up another workspace's announcements and
 * root edits.
 */
import { afterEach, expect, it } from 'vitest';
import { ChatError } from '../../src/chat-errors.ts';
import type { Loop } from '../../src/jobs/loop.ts';
import { type QueueLimits, startNotifier } from '../../src/jobs/notifier.ts';
import type { JobChat } from '../../src/jobs/ports.ts';
import type { JobThread, Store } from '../../src/store/types.ts';
import { memoryLogger } from '../helpers/log.ts';
import { eventually, sleep } from '../helpers/net.ts';
import { describeEachEngine } from '../helpers/store-engines.ts';

/** Slack as a workspace's token meets it: each call takes `latencyMs`; a team's edits may be refused with a 429. */
function slowChat(latencyMs: number) {
  const announced: { teamId: string; key: string }[] = [];
  const shown: { teamId: string; id: number }[] = [];
  const limitedEdits = new Set<string>();
  const refused: string[] = [];
  const chat: JobChat = {
    postRoot: async () => ({ ts: '1.1' }),
    findRoot: async () => null,
    showJob: async (t) => {
      await sleep(latencyMs);
      if (limitedEdits.has(t.teamId)) {
        refused.push(t.teamId);
        throw new ChatError('ratelimited', { retryable: true, retryAfterMs: 30_000 });
      }
      shown.push({ teamId: t.teamId, id: t.id });
    },
    announce: async (t, a) => {
      await sleep(latencyMs);
      announced.push({ teamId: t.teamId, key: a.key });
    },
    hasAnnounced: async () => false,
    acknowledgeReply: async () => {},
    tellUser: async () => {},
  };
  return { chat, announced, shown, limitedEdits, refused };
}

/**
 * Slack holding the calls of some workspaces' tokens until `release()`: their work stays
 * in the notifier's queue (a call in flight counts there until it ends).
 */
function heldChat(hold: { posts: string[]; edits: string[] }) {
  const announced: string[] = [];
  const shown: number[] = [];
  const waiting = { posts: 0, edits: 0 };
  let release = () => {};
  const gate = new Promise<void>((r) => {
    release = r;
  });
  const chat: JobChat = {
    postRoot: async () => ({ ts: '1.1' }),
    findRoot: async () => null,
    showJob: async (t) => {
      if (hold.edits.includes(t.teamId)) {
        waiting.edits++;
        await gate;
      }
      shown.push(t.id);
    },
    announce: async (t, a) => {
      if (hold.posts.includes(t.teamId)) {
        waiting.posts++;
        await gate;
      }
      announced.push(a.key);
    },
    hasAnnounced: async () => false,
    acknowledgeReply: async () => {},
    tellUser: async () => {},
  };
  return { chat, announced, shown, waiting, release: () => release() };
}

const loops: Loop[] = [];
afterEach(async () => {
  for (const l of loops.splice(0)) await l.stop();
});

describeEachEngine('notifier: workspaces in turn (distributed mode)', (db) => {
  let seq = 0;
  /** A running job of `teamId` in a channel of its own, its root showing it. */
  async function runningJob(store: Store, teamId: string): Promise<JobThread> {
    const i = ++seq;
    const t = await store.createThread(
      { teamId, channelId: `C${teamId}${i}`, threadTs: `${i}.1`, userId: 'U', prompt: 'p' },
      0,
    );
    const active = { jobId: `j${i}`, status: 'active' as const, model: null, repository: null };
    await store.attachJob(
      t.id,
      { ...active, ref: null, prLink: null },
      { nextPollAt: null, pollIntervalMs: 1 },
      0,
    );
    const claimed = await store.claimRootUpdate(t.id, 0, { owner: 'setup', until: 1 });
    await store.markRootShown(t.id, claimed!.rootVersion, 'setup');
    return (await store.getThread(t.id))!;
  }

  /** The job finished, as a poll records it: its root changes, its completion is in the outbox. */
  async function finish(store: Store, t: JobThread): Promise<string> {
    const key = `${t.jobId}:0:completed`;
    await store.recordPoll({
      threadId: t.id,
      round: 0,
      snapshot: {
        jobId: t.jobId!,
        status: 'completed',
        model: null,
        repository: null,
        ref: null,
        prLink: null,
      },
      schedule: { nextPollAt: null, pollIntervalMs: 1 },
      announcements: [{ key, kind: 'completed', prLink: null }],
      now: Date.now(),
    });
    return key;
  }

  const start = (chat: JobChat, queueLimits?: Partial<QueueLimits>) => {
    const n = startNotifier({
      ...(queueLimits ? { queueLimits } : {}),
      store: db.store,
      chat,
      log: memoryLogger().log,
      owner: 'n1',
      leaseMs: 30_000,
      perWorkspace: true,
      // Roots are not what this measures: a budget that never holds them.
      updateLimit: { perMinute: 60_000, burst: 100 },
    });
    loops.push(n);
    return n;
  };

  it("announces a quiet workspace's job in the next free slot while a busy one's 200 wait", async () => {
    const busy = [];
    for (let i = 0; i < 200; i++) busy.push(await runningJob(db.store, 'TBUSY'));
    const quiet = await runningJob(db.store, 'TQUIET');
    for (const t of busy) await finish(db.store, t);
    const slack = slowChat(20);
    const n = start(slack.chat);
    await eventually(() => slack.announced.length >= 20, 'the burst under way');
    const key = await finish(db.store, quiet);
    const before = slack.announced.length;
    n.kick(); // as the poller does after recording
    await eventually(() => slack.announced.some((a) => a.key === key), 'the quiet one announced');
    const ahead = slack.announced.findIndex((a) => a.key === key) - before;
    // Ahead of it only the posts in flight when it came (at most the notifier's 16): not
    // the rest of the busy workspace's 200.
    expect(ahead).toBeLessThanOrEqual(16);
    await eventually(() => slack.announced.length === 201, 'the burst announced', 15_000);
  });

  it("edits a workspace's roots while another workspace waits out a 429 on its edits", async () => {
    const limited = await runningJob(db.store, 'TLIMITED');
    const other = await runningJob(db.store, 'TOTHER');
    const slack = slowChat(5);
    slack.limitedEdits.add('TLIMITED');
    const n = start(slack.chat);
    await finish(db.store, limited);
    n.kick();
    await eventually(() => slack.refused.length > 0, 'the 429');
    await finish(db.store, other);
    n.kick();
    await eventually(() => slack.shown.some((s) => s.id === other.id), "the other's root edited");
    await eventually(() => slack.announced.length === 2, 'both announced');
  });

  // The floor: small bounds stand for the real ones (1,000 posts, 200 a workspace, floor 20;
  // 1,000 edits, 50 a workspace, floor 5), and the busy workspaces' calls are held, so their
  // work fills the queue and stays there.
  it("queues a quiet workspace's post while busy workspaces' posts fill the queue", async () => {
    const busy = [];
    for (const team of ['TA', 'TB'])
      for (let i = 0; i < 3; i++) busy.push(await runningJob(db.store, team));
    const quiet = await runningJob(db.store, 'TQUIET');
    const slack = heldChat({ posts: ['TA', 'TB'], edits: [] });
    try {
      for (const t of busy) await finish(db.store, t);
      const n = start(slack.chat, { posts: 4, workspacePosts: 2, postFloor: 1 });
      await eventually(() => slack.waiting.posts === 4, 'the queue full of busy posts');
      const key = await finish(db.store, quiet);
      n.kick();
      await eventually(() => slack.announced.includes(key), 'the quiet one announced', 3_000);
      expect(slack.waiting.posts).toBe(4); // the busy ones' next still wait for room
    } finally {
      slack.release();
    }
    await eventually(() => slack.announced.length === 7, 'all announced');
  });

  it("queues a quiet workspace's root edit while busy workspaces' edits fill the queue", async () => {
    const busy = [];
    for (const team of ['TA', 'TB'])
      for (let i = 0; i < 3; i++) busy.push(await runningJob(db.store, team));
    const quiet = await runningJob(db.store, 'TQUIET');
    // Not a root's first edit (that answers a person and is queued whatever the bounds).
    expect(quiet.rootShownVersion).toBeGreaterThan(1);
    const slack = heldChat({ posts: [], edits: ['TA', 'TB'] });
    try {
      for (const t of busy) await finish(db.store, t);
      const n = start(slack.chat, { allRoots: 4, roots: 2, rootFloor: 1 });
      await eventually(() => slack.waiting.edits === 4, 'the queue full of busy edits');
      await finish(db.store, quiet);
      n.kick();
      await eventually(() => slack.shown.includes(quiet.id), "the quiet one's root edited", 3_000);
      expect(slack.waiting.edits).toBe(4);
    } finally {
      slack.release();
    }
    await eventually(() => new Set(slack.shown).size === 7, 'all edited');
  });
});
