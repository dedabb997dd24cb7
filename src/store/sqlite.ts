import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import { Kysely, SqliteDialect, sql } from 'kysely';
import { type Database, KyselyStore, type WriteTx } from './kysely-store.ts';
import { migrate } from './migrations.ts';

/**
 * The embedded engine: one SQLite file. WAL lets readers run beside the writer, and
 * `BEGIN IMMEDIATE` takes the write lock up front so that two processes on one file wait
 * for each other (busy timeout) instead of failing on a lock upgrade.
 */
export async function openSqliteStore(path: string): Promise<KyselyStore> {
  if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
  const file = new SqliteDatabase(path, { timeout: 5_000 });
  file.pragma('journal_mode = WAL');
  file.pragma('synchronous = NORMAL');
  file.pragma('foreign_keys = ON');
  const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: file }) });
  await migrate(db as Kysely<unknown>);

  const writeTx: WriteTx = (fn) =>
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
    });

  return new KyselyStore(db, writeTx, () => db.destroy());
}
