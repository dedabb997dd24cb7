import { describe, expect, it } from 'vitest';
import { openPostgresStore } from '../../src/store/postgres.ts';
import { memoryLogger } from '../helpers/log.ts';
import { createTestDatabase, postgresAvailable } from '../helpers/postgres.ts';
import { describeEachEngine } from '../helpers/store-engines.ts';
import { poll, snap, thread } from './fixtures.ts';

describeEachEngine('store: engine health', (db) => {
  it('answers a ping, and counts unsent announcements and budget uses within a window', async () => {
    await db.store.ping();
    expect(await db.store.outboxDepth()).toBe(0);
    const t = await db.store.createThread(thread, 0);
    const done = (kind: 'completed' | 'failed') => ({ key: `job_1:0:${kind}`, kind, prLink: null });
    await db.store.recordPoll(
      poll({
        threadId: t.id,
        snapshot: snap({ status: 'completed' }),
        announcements: [done('completed'), done('failed')],
        now: 10,
      }),
    );
    expect(await db.store.outboxDepth()).toBe(2);
    const [first] = await db.store.pendingAnnouncements(20, 10);
    await db.store.markAnnouncementAttempt(first!.id, 0, 100);
    await db.store.markAnnouncementSent(first!.id, 1, 21);
    expect(await db.store.outboxDepth()).toBe(1);

    for (const at of [100, 200, 300]) await db.store.takeBudgetSlot('agent:p', at, 1000, 10);
    await db.store.takeBudgetSlot('analytics', 250, 1000, 10);
    expect(await db.store.budgetUsed('agent:p', 100)).toBe(2); // after 100, not at it
    expect(await db.store.budgetUsed('agent:p', 0)).toBe(3);
    expect(await db.store.budgetUsed('analytics', 0)).toBe(1);
    expect(await db.store.budgetUsed('nothing', 0)).toBe(0);
  });

  it('fails a ping once closed', async () => {
    await db.store.close();
    await expect(db.store.ping()).rejects.toThrow();
    db.store = await db.place.open(); // for afterEach
  });
});

describe.skipIf(!postgresAvailable)('postgres engine', () => {
  it('applies migrations once when replicas start together', async () => {
    const db = await createTestDatabase();
    try {
      const opened = await Promise.all(
        Array.from({ length: 4 }, () =>
          openPostgresStore(db.url, { log: memoryLogger().log, poolSize: 2 }),
        ),
      );
      const t = await opened[0]!.createThread(thread, 1);
      expect((await opened[3]!.getThread(t.id))?.prompt).toBe(thread.prompt);
      for (const s of opened) await s.close();
    } finally {
      await db.drop();
    }
  });

  it('fails to open with a readable error that keeps the password out', async () => {
    const url = 'postgres://bot:hunter2-secret@127.0.0.1:1/nowhere';
    const err = await openPostgresStore(url, { log: memoryLogger().log }).catch((e: Error) => e);
    expect(err).toBeInstanceOf(Error);
    expect((err as Error).message).toMatch(/could not open the PostgreSQL database/);
    expect((err as Error).message).not.toContain('hunter2-secret');
  });
});
