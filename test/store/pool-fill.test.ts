import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { openStore } from '../../src/store/open.ts';
import { createBoundedPool } from '../../src/store/pg-pool.ts';
import { memoryLogger } from '../helpers/log.ts';
import { eventually } from '../helpers/net.ts';
import { createTestDatabase, postgresAvailable, type TestDatabase } from '../helpers/postgres.ts';

/** pg-pool closes a connection idle this long, unless the pool keeps it (its default). */
const PG_POOL_IDLE_MS = 10_000;

/** Connections open on `url`'s database, not counting the one that asks. */
async function openOn(url: string): Promise<number> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ n: string }>(
      'select count(*) as n from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid()',
    );
    return Number(rows[0]?.n);
  } finally {
    await client.end();
  }
}

describe.skipIf(!postgresAvailable)('a pool of a fixed size (src/store/pg-pool.ts)', () => {
  let database: TestDatabase | undefined;
  afterEach(async () => {
    await database?.drop();
    database = undefined;
  });

  it('opens every connection when filled, and keeps them open past an idle spell', async () => {
    database = await createTestDatabase();
    const bounded = createBoundedPool(database.url, {
      log: memoryLogger().log,
      max: 3,
      timeoutMs: 10_000,
    });
    try {
      expect(await openOn(database.url)).toBe(0);
      expect(await bounded.fill()).toBe(3);
      expect(await openOn(database.url)).toBe(3);
      // Longer than pg-pool would leave an idle connection open: a burst after a quiet
      // spell finds them open.
      await new Promise((r) => setTimeout(r, PG_POOL_IDLE_MS + 1_000));
      expect(await openOn(database.url)).toBe(3);
      // Still a pool: queries use the connections, and none more is opened.
      const client = await bounded.pool.connect();
      await client.query('select 1' as never);
      client.release();
      expect(await openOn(database.url)).toBe(3);
    } finally {
      await bounded.end(2_000);
    }
  }, 30_000);

  it("fills the bot's store beside its start when asked, and says so in one line", async () => {
    database = await createTestDatabase();
    const logger = memoryLogger();
    const store = await openStore(database.url, logger.log, { fill: true });
    try {
      const filled = await eventually(
        () => logger.lines().find((l) => l.msg === 'store.pool_filled'),
        'store.pool_filled',
      );
      expect(filled).toMatchObject({ open: 10 });
      expect(await openOn(database.url)).toBe(10);
    } finally {
      await store.close();
    }
  });

  it('opens connections only as they are needed when not asked to fill', async () => {
    database = await createTestDatabase();
    const logger = memoryLogger();
    const store = await openStore(database.url, logger.log);
    try {
      await store.ping();
      await new Promise((r) => setTimeout(r, 200));
      expect(await openOn(database.url)).toBeLessThan(10);
      expect(logger.text()).not.toContain('store.pool_filled');
    } finally {
      await store.close();
    }
  });
});
