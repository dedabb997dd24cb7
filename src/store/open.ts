import type { Logger } from '../log.ts';
import { openSqliteStore } from './sqlite.ts';
import type { Store } from './types.ts';

export interface OpenOptions {
  /** DATABASE_TIMEOUT_MS: how long PostgreSQL may take (src/store/pg-pool.ts). */
  timeoutMs?: number;
}

/** Opens the engine named by DATABASE_URL (`sqlite:PATH` or `postgres://…`), migrated. */
export async function openStore(
  databaseUrl: string,
  log: Logger,
  opts: OpenOptions = {},
): Promise<Store> {
  if (databaseUrl.startsWith('sqlite:'))
    return openSqliteStore(databaseUrl.slice('sqlite:'.length));
  // Loaded only when used: the PostgreSQL client is not needed by a SQLite deployment.
  const { openPostgresStore } = await import('./postgres.ts');
  return openPostgresStore(databaseUrl, {
    log,
    ...(opts.timeoutMs === undefined ? {} : { timeoutMs: opts.timeoutMs }),
  });
}
