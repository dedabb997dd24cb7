import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { startNotifier } from '../../src/jobs/notifier.ts';
import type { JobChat } from '../../src/jobs/ports.ts';
import { openSqliteStore } from '../../src/store/sqlite.ts';
import type { Announcement, JobThread, Store } from '../../src/store/types.ts';
import { memoryLogger } from '../helpers/log.ts';
import { eventually } from '../helpers/net.ts';

/** A stand-in for Slack that records what the notifier asked for. */
function recordingChat() {
  const shown: JobThread[] = [];
  const announced: Announcement[] = [];
  const chat: JobChat = {
    postRoot: async () => ({ ts: '1.1' }),
    findRoot: async () => null,
    showJob: async (t) => {
      shown.push(t);
    },
    announce: async (_t, a) => {
      announced.push(a);
    },
    hasAnnounced: async () => false,
    acknowledgeReply: async () => {},
    tellUser: async () => {},
  };
  return { chat, shown, announced };
}

let dir: string;
let store: Store;
beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'notifier-'));
  store = await openSqliteStore(join(dir, 'bot.sqlite'));
});
afterEach(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

it('works through a backlog larger than one batch without waiting for a kick', async () => {
  const n = 65; // more than three batches of roots, and of announcements
  for (let i = 0; i < n; i++) {
    const t = await store.createThread(
      { teamId: 'T', channelId: `C${i % 7}`, threadTs: `${i}.1`, userId: 'U', prompt: 'p' },
      0,
    );
    await store.attachJob(
      t.id,
      { jobId: `j${i}`, status: 'active', model: null, repository: null, ref: null, prLink: null },
      { nextPollAt: null, pollIntervalMs: 1 },
      0,
    );
    await store.recordPoll({
      threadId: t.id,
      round: 0,
      snapshot: null,
      schedule: { nextPollAt: null, pollIntervalMs: 1 },
      announcements: [{ key: `j${i}:0:failed`, kind: 'failed', prLink: null }],
      now: 0,
    });
  }
  const { chat, shown, announced } = recordingChat();
  const notifier = startNotifier({
    store,
    chat,
    log: memoryLogger().log,
    owner: 'n1',
    leaseMs: 5_000,
    channelGapMs: 0,
  });
  try {
    // The loop's idle wait is 30 s: finishing in a few seconds means it never waited.
    await eventually(() => shown.length === n && announced.length === n, 'everything', 5_000);
  } finally {
    await notifier.stop();
  }
  expect(new Set(shown.map((t) => t.id)).size).toBe(n);
  expect(new Set(announced.map((a) => a.key)).size).toBe(n);
});
