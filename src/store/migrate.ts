import { type Kysely, sql } from 'kysely';
import { type Migration, type MigrationProvider, Migrator } from 'kysely/migration';
import type { Engine } from './engine.ts';
import { migrations, type Step } from './migrations.ts';

/** Kysely's record of the migrations applied; every build reads it, so it keeps Kysely's shape. */
const APPLIED = 'kysely_migration';
/**
 * The breaking migrations applied, each written by the migration itself in its transaction:
 * a build that does not know a migration can still tell whether it may run beside it.
 */
const BREAKS = 'schema_breaks';

/** The database holds a breaking migration this build does not know: it must not run on it. */
export class SchemaTooNew extends Error {
  readonly migration: string;
  constructor(migration: string, note: string) {
    super(
      `the database was migrated by a newer version with a breaking change ${migration} ` +
        `(${note}): roll forward to that version or later, or restore the backup taken before it`,
    );
    this.name = 'SchemaTooNew';
    this.migration = migration;
  }
}

export interface MigrationOutcome {
  /** Migrations this start applied. */
  applied: string[];
  /** Applied migrations this build does not know: a newer build's, all additive. */
  newer: string[];
}

/**
 * Brings the schema up to this build's migrations, all pending ones in one transaction.
 *
 * - SQLite: the run holds `BEGIN EXCLUSIVE` on the file: a second process starting on the
 *   same (fresh) file waits for the first (busy timeout), then finds the schema migrated; a
 *   migration that fails half-way leaves nothing behind (SQLite's DDL is transactional, but
 *   Kysely's migrator opens no transaction on SQLite: this does).
 * - PostgreSQL: the caller holds a session advisory lock across the call, and Kysely's
 *   migrator runs the pending migrations in one transaction.
 *
 * Migrations a newer build applied are tolerated when additive, so that a rollback, or an
 * older replica in a rolling deploy, starts; a breaking one is refused with SchemaTooNew.
 */
export async function migrate(
  db: Kysely<unknown>,
  kind: Engine['kind'],
  steps: Record<string, Step> = migrations(kind),
): Promise<MigrationOutcome> {
  if (kind === 'postgres') return run(db, steps);
  return db.connection().execute(async (conn) => {
    await sql`begin exclusive`.execute(conn);
    try {
      const outcome = await run(conn, steps);
      await sql`commit`.execute(conn);
      return outcome;
    } catch (err) {
      await sql`rollback`.execute(conn).catch(() => {});
      throw err;
    }
  });
}

async function run(db: Kysely<unknown>, steps: Record<string, Step>): Promise<MigrationOutcome> {
  const tables = new Set(
    (await db.introspection.getTables({ withInternalKyselyTables: true })).map((t) => t.name),
  );
  const done = tables.has(APPLIED)
    ? (await sql<{ name: string }>`select name from ${sql.table(APPLIED)}`.execute(db)).rows
    : [];
  const newer = done.map((r) => r.name).filter((name) => !Object.hasOwn(steps, name));
  if (newer.length > 0 && tables.has(BREAKS)) {
    const { rows } = await sql<{
      name: string;
      note: string;
    }>`select name, note from ${sql.table(BREAKS)}`.execute(db);
    const breaking = rows.filter((r) => newer.includes(r.name)).sort(byName)[0];
    if (breaking) throw new SchemaTooNew(breaking.name, breaking.note);
  }

  const all: Record<string, Migration> = {};
  // Kysely refuses an applied migration it is not given: it is given as done.
  for (const name of newer) all[name] = { up: () => Promise.reject(new Error(`${name} unknown`)) };
  for (const [name, step] of Object.entries(steps)) all[name] = marked(name, step);
  const provider: MigrationProvider = { getMigrations: async () => all };
  const { error, results } = await new Migrator({ db, provider }).migrateToLatest();
  const failed = results?.find((r) => r.status === 'Error');
  if (error || failed) {
    const cause = error instanceof Error ? error.message : String(error ?? 'unknown');
    throw new Error(`database migration ${failed?.migrationName ?? ''} failed: ${cause}`);
  }
  const applied = (results ?? []).filter((r) => r.status === 'Success');
  return { applied: applied.map((r) => r.migrationName), newer };
}

/** A breaking step records itself in `schema_breaks`, in the same transaction. */
function marked(name: string, step: Step): Migration {
  const { breaking } = step;
  if (!breaking) return { up: step.up };
  return {
    async up(db) {
      await step.up(db);
      await db.schema
        .createTable(BREAKS)
        .ifNotExists()
        .addColumn('name', 'varchar(255)', (c) => c.primaryKey())
        .addColumn('note', 'text', (c) => c.notNull())
        .execute();
      await sql`insert into ${sql.table(BREAKS)} (name, note) values (${name}, ${breaking})`.execute(
        db,
      );
    },
  };
}

const byName = (a: { name: string }, b: { name: string }) => a.name.localeCompare(b.name);
