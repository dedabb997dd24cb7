import { Kysely, PostgresDialect, sql } from 'kysely';
import type { Logger } from '../log.ts';
import type { Engine } from './engine.ts';
import { migrate, SchemaTooNew } from './migrate.ts';
import { type BoundedPool, createBoundedPool } from './pg-pool.ts';
import type { Database } from './schema.ts';
import { createStore } from './store.ts';
import type { Store } from './types.ts';

/** Any fixed number will do: it only has to be the same for every replica of this bot. */
const MIGRATION_LOCK = 0x646f6373; // "docs"
/** PostgreSQL's SQLSTATE for unique_violation. */
const UNIQUE_VIOLATION = '23505';

export interface PostgresOptions {
  log: Logger;
  /** Connections per replica. */
  poolSize?: number;
  /** DATABASE_TIMEOUT_MS (src/store/pg-pool.ts says what it bounds). */
  timeoutMs?: number;
  /** Open the pool's every connection once migrated, beside the start (the bot's own store). */
  fill?: boolean;
}

/** DATABASE_TIMEOUT_MS's default. */
export const DEFAULT_DATABASE_TIMEOUT_MS = 10_000;
/** How long a close waits for connections to say goodbye before it cuts them. */
const CLOSE_WAIT_MS = 2_000;

/**
 * The engine for several replicas: every replica opens a pool on the same database.
 * Migrations run under a session advisory lock, so replicas starting together apply them
 * once, one after the other.
 */
export async function openPostgresStore(url: string, opts: PostgresOptions): Promise<Store> {
  const bounded = createBoundedPool(url, {
    log: opts.log,
    max: opts.poolSize ?? 10,
    timeoutMs: opts.timeoutMs ?? DEFAULT_DATABASE_TIMEOUT_MS,
  });
  const pool = bounded.pool;
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
    skipLocked: (qb, of) => qb.forUpdate(of as never).skipLocked() as typeof qb,
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
    // Kysely's destroy waits for every connection's goodbye, which a server that stopped
    // answering never sends: the pool is ended here, bounded, and Kysely has nothing left.
    close: async () => {
      await bounded.end(CLOSE_WAIT_MS);
      await db.destroy().catch(() => {});
    },
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
    await engine.close();
    if (err instanceof SchemaTooNew) throw err;
    throw new Error(`could not open the PostgreSQL database: ${describe(err)}`);
  }
  if (opts.fill) fillPool(bounded, opts.log);
  return createStore(engine);
}

/** Opens the pool's connections beside the start: one line says how many, and how long it took. */
function fillPool(bounded: BoundedPool, log: Logger): void {
  const started = performance.now();
  void bounded
    .fill()
    .then((open) =>
      log.info(
        { component: 'store', open, ms: Math.round(performance.now() - started) },
        'store.pool_filled',
      ),
    );
}

/** The driver's words, without the connection string (it may hold a password). */
function describe(err: unknown): string {
  const e = err as { code?: string; message?: string };
  return e?.code ? `${e.message ?? 'error'} (${e.code})` : (e?.message ?? String(err));
}
