import { randomBytes } from 'node:crypto';
import pg from 'pg';

/**
 * A real PostgreSQL server for the tests: a fresh database per use, dropped after. The
 * server is the machine's (127.0.0.1:5432, trust auth) unless TEST_POSTGRES_URL names
 * another. Without a server the PostgreSQL tests are skipped with one line, except in CI
 * (`CI=true`, set by .ci/run), where a missing server fails the run.
 */
export const ADMIN_URL =
  process.env.TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

async function probe(): Promise<string | null> {
  const client = new pg.Client({ connectionString: ADMIN_URL, connectionTimeoutMillis: 2_000 });
  try {
    await client.connect();
    await client.query('select 1');
    return null;
  } catch (err) {
    return (err as Error).message;
  } finally {
    await client.end().catch(() => {});
  }
}

const problem = await probe();
if (problem !== null) {
  if (process.env.CI) throw new Error(`PostgreSQL is required in CI but not reachable: ${problem}`);
  console.warn(`PostgreSQL tests skipped: no server at ${ADMIN_URL} (${problem})`);
}
/** Whether the PostgreSQL tests run here. */
export const postgresAvailable = problem === null;

async function admin<T>(fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: ADMIN_URL });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

export interface TestDatabase {
  url: string;
  drop(): Promise<void>;
}

/** A new, empty database; `drop()` removes it even while connections remain. */
export async function createTestDatabase(): Promise<TestDatabase> {
  const name = `docs_agent_test_${process.pid}_${randomBytes(4).toString('hex')}`;
  await admin((c) => c.query(`create database ${name}`));
  const url = new URL(ADMIN_URL);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: () =>
      admin((c) => c.query(`drop database if exists ${name} with (force)`)).then(() => {}),
  };
}
