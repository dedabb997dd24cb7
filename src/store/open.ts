import type { Logger } from '../log.ts';
import { SchemaTooNew } from './migrate.ts';
import { openSqliteStore } from './sqlite.ts';
import type { Store } from './types.ts';

export interface OpenOptions {
  /** DATABASE_TIMEOUT_MS: how long PostgreSQL may take (src/store/pg-pool.ts). */
  timeoutMs?: number;
  /** PostgreSQL: open every connection of the pool beside the start (src/store/pg-pool.ts). */
  fill?: boolean;
}

/** Opens the engine named by DATABASE_URL (`sqlite:PATH` or `postgres://…`), migrated. */
export async function openStore(
  databaseUrl: string,
  log: Logger,
  opts: OpenOptions = {},
): Promise<Store> {
  try {
    if (databaseUrl.startsWith('sqlite:'))
      return await openSqliteStore(databaseUrl.slice('sqlite:'.length), log);
    // Loaded only when used: the PostgreSQL client is not needed by a SQLite deployment.
    const { openPostgresStore } = await import('./postgres.ts');
    return await openPostgresStore(databaseUrl, {
      log,
      ...(opts.timeoutMs === undefined ? {} : { timeoutMs: opts.timeoutMs }),
      ...(opts.fill ? { fill: true } : {}),
    });
  } catch (err) {
    // A rollback past a breaking migration: say which, before the process stops.
    if (err instanceof SchemaTooNew)
      log.error({ migration: err.migration, reason: err.message }, 'store.schema_too_new');
    throw err;
  }
}
