import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { slidingWindowBudget } from '../src/api/budget.ts';
import { BudgetExhausted } from '../src/api/errors.ts';
import { type DatabaseClock, startDatabaseClock } from '../src/clock.ts';
import { interruptedFollowUps } from '../src/jobs/recovery.ts';
import { openPostgresStore } from '../src/store/postgres.ts';
import { openSqliteStore } from '../src/store/sqlite.ts';
import type { Store } from '../src/store/types.ts';
import { memoryLogger } from './helpers/log.ts';
import { eventually } from './helpers/net.ts';
import { createTestDatabase, postgresAvailable, type TestDatabase } from './helpers/postgres.ts';
import { snap, thread } from './store/fixtures.ts';

/** LEASE_MS in production; a replica 6 s fast is 0.2 of it. */
const LEASE_MS = 30_000;
const FAST_MS = 6_000;

describe.runIf(postgresAvailable)('one clock: two replicas on PostgreSQL, one 6 s fast', () => {
  let db: TestDatabase;
  const stores: Store[] = [];
  const clocks: DatabaseClock[] = [];
  afterEach(async () => {
    for (const c of clocks.splice(0)) c.stop();
    for (const s of stores.splice(0)) await s.close();
    await db.drop();
  });

  /** A replica: its own pool on the database, and its clock (its process's, `aheadMs` off). */
  async function replica(aheadMs: number) {
    const { log } = memoryLogger();
    const store = await openPostgresStore(db.url, { log, poolSize: 2 });
    stores.push(store);
    const clock = await startDatabaseClock({
      store,
      log,
      everyMs: LEASE_MS / 2,
      local: () => Date.now() + aheadMs,
    });
    clocks.push(clock);
    return { store, clock, log };
  }

  it('measures how far its clock is from the database server', async () => {
    db = await createTestDatabase();
    const fast = await replica(FAST_MS);
    expect(Math.abs(fast.clock.offsetMs() + FAST_MS)).toBeLessThan(1_000);
    expect(Math.abs(fast.clock.now() - Date.now())).toBeLessThan(1_000);
  });

  it('follows a step of its own clock (NTP) at the next measure', async () => {
    db = await createTestDatabase();
    const { log } = memoryLogger();
    const store = await openPostgresStore(db.url, { log, poolSize: 2 });
    stores.push(store);
    let shift = 0;
    const clock = await startDatabaseClock({
      store,
      log,
      everyMs: 50,
      local: () => Date.now() + shift,
    });
    clocks.push(clock);
    expect(Math.abs(clock.offsetMs())).toBeLessThan(1_000);
    shift = FAST_MS;
    await eventually(() => Math.abs(clock.offsetMs() + FAST_MS) < 1_000, 'the new offset');
    expect(Math.abs(clock.now() - Date.now())).toBeLessThan(1_000);
  });

  it("does not take over the other's live lease", async () => {
    db = await createTestDatabase();
    const a = await replica(0);
    const b = await replica(FAST_MS);
    const t = await a.store.createThread(thread, a.clock.now());
    await a.store.attachJob(
      t.id,
      snap(),
      { nextPollAt: a.clock.now(), pollIntervalMs: 100 },
      a.clock.now(),
    );
    // A's poll lease has 5 s left (claimed 25 s ago, as A counts).
    const claimed = await a.store.claimDueJobs(a.clock.now(), 10, {
      owner: 'a',
      until: a.clock.now() + 5_000,
    });
    expect(claimed.map((j) => j.id)).toEqual([t.id]);
    const taken = await b.store.claimDueJobs(b.clock.now(), 10, {
      owner: 'b',
      until: b.clock.now() + LEASE_MS,
    });
    expect(taken).toEqual([]);
  });

  it('posts no false "may not have arrived" notice for a reply being sent', async () => {
    db = await createTestDatabase();
    const a = await replica(0);
    const b = await replica(FAST_MS);
    const t = await a.store.createThread(thread, a.clock.now());
    await a.store.attachJob(t.id, snap(), { nextPollAt: null, pollIntervalMs: 100 }, 0);
    const reply = { threadId: t.id, replyKey: 'r1', replyTs: '200.1', userId: 'U2', text: 'hi' };
    const f = await a.store.recordFollowUp(reply, ['event:Ev1'], a.clock.now());
    // A has been sending it for 25 s of the 30 s after which it counts as cut off.
    expect(await a.store.moveFollowUp(f!.id, ['received'], 'sending', a.clock.now() - 25_000)).toBe(
      true,
    );
    const told = await interruptedFollowUps(
      {
        store: b.store,
        chat: { findRoot: async () => null },
        deliver: async () => 'sent',
        log: b.log,
        staleMs: LEASE_MS,
        firstPoll: () => ({ nextPollAt: b.clock.now(), pollIntervalMs: 100 }),
        wake: () => {},
        now: b.clock.now,
      },
      b.log,
    );
    expect(told).toBe(0);
    expect(await b.store.outboxDepth()).toBe(0);
  });

  it('frees no budget slot early', async () => {
    db = await createTestDatabase();
    const a = await replica(0);
    const b = await replica(FAST_MS);
    // A 10 s window of one slot (an hour of 100 in production), taken 5 s ago by A.
    const budget = (r: { store: Store; clock: DatabaseClock }, shift = 0) =>
      slidingWindowBudget(r.store, {
        key: 'agent:p',
        limit: 1,
        windowMs: 10_000,
        description: 'the budget',
        now: () => r.clock.now() + shift,
      });
    await budget(a, -5_000).take('create a job');
    await expect(budget(b).take('create a job')).rejects.toBeInstanceOf(BudgetExhausted);
    expect(await budget(b).remaining()).toBe(0);
  });
});

describe('one clock on SQLite', () => {
  let dir: string | undefined;
  afterEach(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("is this machine's clock: the database is a file here", async () => {
    dir = mkdtempSync(join(tmpdir(), 'clock-'));
    const store = await openSqliteStore(join(dir, 'bot.sqlite'));
    const clock = await startDatabaseClock({
      store,
      log: memoryLogger().log,
      everyMs: LEASE_MS / 2,
      local: () => 42,
    });
    expect([clock.offsetMs(), clock.now()]).toEqual([0, 42]);
    clock.stop();
    await store.close();
  });
});
