import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe } from 'vitest';
import { openPostgresStore } from '../../src/store/postgres.ts';
import { openSqliteStore } from '../../src/store/sqlite.ts';
import type { Store } from '../../src/store/types.ts';
import { memoryLogger } from './log.ts';
import { createTestDatabase, postgresAvailable } from './postgres.ts';

/**
 * The engines the store suite runs on (test/store/*.test.ts).
 *
 * One suite for every engine: both must pass exactly these tests. Each test gets a fresh
 * database: a real SQLite file in a temp folder, or a new PostgreSQL database dropped after.
 * `open()` may be called more than once: every call is another process on the same data.
 */
export interface Place {
  open(): Promise<Store>;
  cleanup(): Promise<void>;
  /**
   * Whether racers may be separate connections in this test process. SQLite serves one
   * process (a second connection here would busy-wait on the event loop the first one
   * needs), so its racers share one connection; PostgreSQL's are separate pools.
   */
  replicas: boolean;
}
export const engines: [string, () => Promise<Place>][] = [
  [
    'sqlite',
    async () => {
      const dir = mkdtempSync(join(tmpdir(), 'store-'));
      return {
        open: () => openSqliteStore(join(dir, 'nested', 'bot.sqlite')),
        cleanup: async () => rmSync(dir, { recursive: true, force: true }),
        replicas: false,
      };
    },
  ],
];
// Without a server the PostgreSQL half is left out with one line, except under CI=true,
// where importing test/helpers/postgres.ts already failed the run.
if (postgresAvailable)
  engines.push([
    'postgres',
    async () => {
      const db = await createTestDatabase();
      return {
        open: () => openPostgresStore(db.url, { log: memoryLogger().log, poolSize: 4 }),
        cleanup: () => db.drop(),
        replicas: true,
      };
    },
  ]);

/** What a test in `describeEachEngine` works on, set up afresh before each test. */
export interface StoreUnderTest {
  /** This test's data: open it again for a restart. */
  place: Place;
  /**
   * The store opened on it, closed after the test. A test that closes it and opens another
   * (a restart) puts the new one here, so that it is the one closed.
   */
  store: Store;
  /**
   * Another replica on the same data where the engine serves several (PostgreSQL), else
   * `store` itself (see `Place.replicas`); closed after the test.
   */
  another(): Promise<Store>;
}

/**
 * `describe(title)` once per engine (`title (sqlite)`, `title (postgres)`), each test on a
 * fresh database with a store open on it; after each test the stores are closed and the
 * database removed (the temp folder, or the PostgreSQL database dropped).
 */
export function describeEachEngine(title: string, body: (db: StoreUnderTest) => void): void {
  describe.each(engines)(`${title} (%s)`, (_name, setup) => {
    const others: Store[] = [];
    const db: StoreUnderTest = {
      place: undefined as unknown as Place,
      store: undefined as unknown as Store,
      async another() {
        if (!db.place.replicas) return db.store;
        const s = await db.place.open();
        others.push(s);
        return s;
      },
    };
    beforeEach(async () => {
      db.place = await setup();
      db.store = await db.place.open();
    });
    afterEach(async () => {
      await db.store.close();
      for (const s of others.splice(0)) await s.close();
      await db.place.cleanup();
    });
    body(db);
  });
}
