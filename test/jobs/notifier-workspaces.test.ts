/**
 * The real notifier in distributed mode (each workspace posts with its own token, within its
 * own limits) on a real store, both engines, against a stand-in for Slack whose calls take
 * time: one workspace's burst or 429 does not hold up another workspace's announcements and
 * root edits.
 */
import { afterEach, expect, it } from 'vitest';
import { ChatError } from '../../src/chat-errors.ts';
import type { Loop } from '../../src/jobs/loop.ts';
import { startNotifier } from '../../src/jobs/notifier.ts';
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

  const start = (chat: JobChat) => {
    const n = startNotifier({
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
});
