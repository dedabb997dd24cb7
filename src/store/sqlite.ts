import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import { Kysely, SqliteDialect, sql } from 'kysely';
import type { Logger } from '../log.ts';
import type { Engine } from './engine.ts';
import { migrate } from './migrate.ts';
import type { Database } from './schema.ts';
import { createStore } from './store.ts';
import type { Store } from './types.ts';

/**
 * The embedded engine: one SQLite file, for one process. WAL lets readers run beside the
 * writer, and `BEGIN IMMEDIATE` takes the write lock up front so that two processes on one
 * file wait for each other (busy timeout) instead of failing on a lock upgrade; migrations
 * run under `BEGIN EXCLUSIVE` (src/store/migrate.ts).
 */
/** SQLite's own default page cache (2 MB), not better-sqlite3's 16 MB. */
const PAGE_CACHE_KIB = 2_000;

export async function openSqliteStore(path: string, log?: Logger): Promise<Store> {
  if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
  const file = new SqliteDatabase(path, { timeout: 5_000 });
  file.pragma('journal_mode = WAL');
  file.pragma('synchronous = NORMAL');
  file.pragma('foreign_keys = ON');
  // better-sqlite3 builds SQLite with a 16 MB page cache per connection, resident for good
  // once the database is that big; the OS's file cache serves re-reads just as well.
  file.pragma(`cache_size = -${PAGE_CACHE_KIB}`);
  const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: cached(file) }) });

  const engine: Engine = {
    kind: 'sqlite',
    db,
    // Every write transaction holds the one write lock, so named locks need nothing more.
    writeTx: (fn) =>
      db.connection().execute(async (conn) => {
        await sql`begin immediate`.execute(conn);
        try {
          const result = await fn(conn as Parameters<typeof fn>[0]);
          await sql`commit`.execute(conn);
          return result;
        } catch (err) {
          await sql`rollback`.execute(conn);
          throw err;
        }
      }),
    forUpdate: (qb) => qb,
    skipLocked: (qb) => qb,
    isUniqueViolation: (err) =>
      (err as { code?: unknown } | null)?.code === 'SQLITE_CONSTRAINT_UNIQUE' ||
      (err as { code?: unknown } | null)?.code === 'SQLITE_CONSTRAINT_PRIMARYKEY',
    ping: async () => {
      await sql`select 1`.execute(db);
    },
    databaseTime: async () => null,
    close: () => db.destroy(),
  };
  const { newer } = await migrate(db as unknown as Kysely<unknown>, 'sqlite');
  if (newer.length > 0) log?.info({ component: 'store', newer }, 'store.schema_newer');
  return createStore(engine);
}

/**
 * Kysely prepares every query anew; preparing costs more than running most of ours. The
 * queries are few and parameterised, so their statements are kept (up to a bound, for the
 * few whose text varies with a list's length).
 */
function cached(file: SqliteDatabase.Database, max = 500) {
  const statements = new Map<string, SqliteDatabase.Statement>();
  return {
    close: () => file.close(),
    prepare(text: string) {
      let stmt = statements.get(text);
      if (!stmt) {
        if (statements.size >= max) statements.clear();
        stmt = file.prepare(text);
        statements.set(text, stmt);
      }
      return stmt;
    },
  };
}
