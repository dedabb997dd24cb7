import type { Kysely, SelectQueryBuilder, Transaction } from 'kysely';
import type { Database } from './schema.ts';

/**
 * What differs between the database engines, in one place. The store's queries are written
 * once over Kysely; wherever SQLite and PostgreSQL need different SQL or behave differently
 * under concurrency, the query asks its engine.
 *
 * - SQLite is one process's file: `BEGIN IMMEDIATE` takes the whole database's write lock,
 *   so every write transaction is serialised and row locks are neither needed nor spoken.
 * - PostgreSQL serves several replicas at READ COMMITTED: a read-then-write transaction
 *   must lock what it read (`FOR UPDATE`), claims skip rows another replica is claiming
 *   (`SKIP LOCKED`), and a check-then-insert on a key takes an advisory lock on that key.
 */
export interface Engine {
  readonly kind: 'sqlite' | 'postgres';
  readonly db: Kysely<Database>;
  /**
   * Runs `fn` in a write transaction. `lock` names what callers must take in turn, across
   * processes (a budget bucket, a digest period): an advisory lock for the transaction in
   * PostgreSQL; SQLite's write lock already covers it.
   */
  writeTx<T>(fn: (tx: Transaction<Database>) => Promise<T>, lock?: string): Promise<T>;
  /** `SELECT … FOR UPDATE` where the engine has row locks. */
  forUpdate<QB extends AnySelect>(qb: QB): QB;
  /**
   * `SELECT … FOR UPDATE SKIP LOCKED`: rows another replica is claiming are passed over.
   * `of` names the one table of a join whose rows are locked (`FOR UPDATE OF`).
   */
  skipLocked<QB extends AnySelect>(qb: QB, of?: string): QB;
  /** A unique-key violation, in whichever words the engine uses. */
  isUniqueViolation(err: unknown): boolean;
  /** A cheap round trip: is the database there? */
  ping(): Promise<void>;
  /** The server's clock (epoch ms), or null when the database is this machine's file. */
  databaseTime(): Promise<number | null>;
  close(): Promise<void>;
}

// biome-ignore lint/suspicious/noExplicitAny: any select over any tables may be locked
export type AnySelect = SelectQueryBuilder<any, any, any>;
