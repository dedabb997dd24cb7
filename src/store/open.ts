import type { Logger } from '../log.ts';
import { openSqliteStore } from './sqlite.ts';
import type { Store } from './types.ts';

/** Opens the engine named by DATABASE_URL (`sqlite:PATH` or `postgres://…`), migrated. */
export async function openStore(databaseUrl: string, log: Logger): Promise<Store> {
  if (databaseUrl.startsWith('sqlite:'))
    return openSqliteStore(databaseUrl.slice('sqlite:'.length), log);
  // Loaded only when used: the PostgreSQL client is not needed by a SQLite deployment.
  const { openPostgresStore } = await import('./postgres.ts');
  return openPostgresStore(databaseUrl, { log });
}
