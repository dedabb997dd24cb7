import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe } from 'vitest';
import type { Engine } from '../../src/store/engine.ts';
import { openPostgresStore } from '../../src/store/postgres.ts';
import { openSqliteStore } from '../../src/store/sqlite.ts';
import type { Store } from '../../src/store/types.ts';
import { memoryLogger } from './log.ts';
import { createTestDatabase, postgresAvailable } from './postgres.ts';

/** 'sqlite' or 'postgres'. */
export type EngineKind = Engine['kind'];

/**
 * The engines the store suites (test/store/*.test.ts) run on: both must pass exactly the same
 * tests. Without a server the PostgreSQL half is left out with one line, except under
 * CI=true, where importing test/helpers/postgres.ts already failed the run.
 */
export const engineKinds: readonly EngineKind[] = postgresAvailable
  ? ['sqlite', 'postgres']
  : ['sqlite'];

/** A fresh, empty database; `drop()` removes it (the temp folder, or the database). */
export interface FreshDatabase {
  kind: EngineKind;
  /** The SQLite file (not created yet), or the PostgreSQL database's URL. */
  at: string;
  drop(): Promise<void>;
}

/** A SQLite file (`sqliteFile`) in a new temp folder of its own, or a new PostgreSQL database. */
export async function freshDatabase(
  kind: EngineKind,
  sqliteFile = 'bot.sqlite',
): Promise<FreshDatabase> {
  if (kind === 'postgres') {
    const db = await createTestDatabase();
    return { kind, at: db.url, drop: () => db.drop() };
  }
  const dir = mkdtempSync(join(tmpdir(), 'store-'));
  return {
    kind,
    at: join(dir, sqliteFile),
    drop: async () => rmSync(dir, { recursive: true, force: true }),
  };
}

/** `fresh(kind)`, once or more in a test: a fresh database, each dropped after the test. */
export function freshDatabaseEachTest(): (kind: EngineKind) => Promise<FreshDatabase> {
  const made: FreshDatabase[] = [];
  afterEach(async () => {
    for (const db of made.splice(0)) await db.drop();
  });
  return async (kind) => {
    const db = await freshDatabase(kind);
    made.push(db);
    return db;
  };
}

/** The DATABASE_URL that names the database, as the bot and the scripts read it. */
export function databaseUrl(db: FreshDatabase): string {
  return db.kind === 'sqlite' ? `sqlite:${db.at}` : db.at;
}

/** This build's store on the database; every call is another process on the same data. */
export function openStore(db: FreshDatabase, poolSize: number): Promise<Store> {
  return db.kind === 'sqlite'
    ? openSqliteStore(db.at)
    : openPostgresStore(db.at, { log: memoryLogger().log, poolSize });
}

/**
 * One engine's place for a test: a fresh database, dropped after. `open()` may be called
 * more than once: every call is another process on the same data.
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
export const engines: [EngineKind, () => Promise<Place>][] = engineKinds.map((kind) => [
  kind,
  async () => {
    // A folder that does not exist yet: opening the store creates it.
    const db = await freshDatabase(kind, join('nested', 'bot.sqlite'));
    return { open: () => openStore(db, 4), cleanup: db.drop, replicas: kind === 'postgres' };
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
