import { openSqliteStore } from './sqlite.ts';
import type { Store } from './types.ts';

/** Opens the engine named by DATABASE_URL and applies migrations. */
export async function openStore(databaseUrl: string): Promise<Store> {
  if (databaseUrl.startsWith('sqlite:'))
    return openSqliteStore(databaseUrl.slice('sqlite:'.length));
  throw new Error(
    'DATABASE_URL: the PostgreSQL engine is not available in this version yet; use sqlite:PATH',
  );
}
