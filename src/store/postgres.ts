import { Kysely, PostgresDialect, sql } from 'kysely';
import pg from 'pg';
import type { Logger } from '../log.ts';
import type { Engine } from './engine.ts';
import { migrate, SchemaTooNew } from './migrate.ts';
import type { Database } from './schema.ts';
import { createStore } from './store.ts';
import type { Store } from './types.ts';

/** Any fixed number will do: it only has to be the same for every replica of this bot. */
const MIGRATION_LOCK = 0x646f6373; // "docs"
const INT8_OID = 20;
/** PostgreSQL's SQLSTATE for unique_violation. */
const UNIQUE_VIOLATION = '23505';

export interface PostgresOptions {
  log: Logger;
  /** Connections per replica. */
  poolSize?: number;
}

/**
 * The engine for several replicas: every replica opens a pool on the same database.
 * Migrations run under a session advisory lock, so replicas starting together apply them
 * once, one after the other.
 */
export async function openPostgresStore(url: string, opts: PostgresOptions): Promise<Store> {
  const pool = new pg.Pool({
    connectionString: url,
    max: opts.poolSize ?? 10,
    connectionTimeoutMillis: 10_000,
    // Epoch milliseconds are BIGINT; every one we store fits a double exactly.
    types: {
      getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
        oid === INT8_OID
          ? (v: string) => Number(v)
          : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
    },
  });
  // An idle connection that dies (server restart, network) is replaced on next use; without
  // a listener the pool's 'error' event would end the process.
  pool.on('error', (err) => opts.log.warn({ err, component: 'store' }, 'store.connection_lost'));
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });

  const engine: Engine = {
    kind: 'postgres',
    db,
    writeTx: (fn, lock) =>
      db.transaction().execute(async (tx) => {
        if (lock) await sql`select pg_advisory_xact_lock(hashtextextended(${lock}, 0))`.execute(tx);
        return fn(tx);
      }),
    forUpdate: (qb) => qb.forUpdate() as typeof qb,
    skipLocked: (qb) => qb.forUpdate().skipLocked() as typeof qb,
    isUniqueViolation: (err) => (err as { code?: unknown } | null)?.code === UNIQUE_VIOLATION,
    ping: async () => {
      await sql`select 1`.execute(db);
    },
    // clock_timestamp(), not now(): now() is the transaction's start.
    databaseTime: async () => {
      const { rows } = await sql<{
        t: string;
      }>`select (extract(epoch from clock_timestamp()) * 1000)::text as t`.execute(db);
      return Number(rows[0]?.t);
    },
    close: () => db.destroy(),
  };

  try {
    const lockHolder = await pool.connect();
    try {
      await lockHolder.query('select pg_advisory_lock($1)', [MIGRATION_LOCK]);
      const { newer } = await migrate(db as unknown as Kysely<unknown>, 'postgres');
      if (newer.length > 0) opts.log.info({ component: 'store', newer }, 'store.schema_newer');
    } finally {
      await lockHolder.query('select pg_advisory_unlock($1)', [MIGRATION_LOCK]).catch(() => {});
      lockHolder.release();
    }
  } catch (err) {
    await db.destroy();
    if (err instanceof SchemaTooNew) throw err;
    throw new Error(`could not open the PostgreSQL database: ${describe(err)}`);
  }
  return createStore(engine);
}

/** The driver's words, without the connection string (it may hold a password). */
function describe(err: unknown): string {
  const e = err as { code?: string; message?: string };
  return e?.code ? `${e.message ?? 'error'} (${e.code})` : (e?.message ?? String(err));
}
