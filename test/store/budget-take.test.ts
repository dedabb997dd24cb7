import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { openPostgresStore } from '../../src/store/postgres.ts';
import type { Store } from '../../src/store/types.ts';
import { memoryLogger } from '../helpers/log.ts';
import { createTestDatabase, postgresAvailable, type TestDatabase } from '../helpers/postgres.ts';

/**
 * PostgreSQL takes a budget slot in one call of migration 0022's function. During a rolling
 * deploy an older replica takes slots in a transaction under `budget:<bucket>`'s advisory
 * lock: the function must wait for that lock, or the two could both take the last slot.
 */
describe.skipIf(!postgresAvailable)('a budget slot in one call (PostgreSQL)', () => {
  let database: TestDatabase | undefined;
  let store: Store | undefined;
  afterEach(async () => {
    await store?.close();
    await database?.drop();
    store = undefined;
    database = undefined;
  });

  it("waits for an older replica's transaction on the same bucket, then counts its use", async () => {
    database = await createTestDatabase();
    store = await openPostgresStore(database.url, { log: memoryLogger().log });
    const older = new pg.Client({ connectionString: database.url });
    await older.connect();
    try {
      // The older replica's transaction: the lock, then the last slot of a budget of one.
      await older.query('begin');
      await older.query('select pg_advisory_xact_lock(hashtextextended($1, 0))', ['budget:K']);
      await older.query('insert into budget_uses (bucket, used_at) values ($1, $2)', ['K', 1_000]);
      let settled = false;
      const taking = store.takeBudgetSlot('K', 2_000, 60_000, 1).finally(() => {
        settled = true;
      });
      await new Promise((r) => setTimeout(r, 300));
      expect(settled).toBe(false);
      await older.query('commit');
      // The window holds the older replica's use: the budget is spent until it is old.
      expect(await taking).toEqual({ ok: false, retryAtMs: 61_000 });
    } finally {
      await older.end();
    }
  });

  it('takes a slot while the window has room, and deletes the uses that left it', async () => {
    database = await createTestDatabase();
    store = await openPostgresStore(database.url, { log: memoryLogger().log });
    const first = await store.takeBudgetSlot('K', 1_000, 60_000, 2);
    expect(first).toMatchObject({ ok: true });
    expect(await store.takeBudgetSlot('K', 2_000, 60_000, 2)).toMatchObject({ ok: true });
    expect(await store.takeBudgetSlot('K', 3_000, 60_000, 2)).toEqual({
      ok: false,
      retryAtMs: 61_000,
    });
    // A window later the first use has left it: a slot again, and its row is gone.
    expect(await store.takeBudgetSlot('K', 61_000, 60_000, 2)).toMatchObject({ ok: true });
    expect(await store.budgetUsed('K', 0)).toBe(2);
  });
});
