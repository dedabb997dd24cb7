import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openPostgresStore } from '../../src/store/postgres.ts';
import { openSqliteStore } from '../../src/store/sqlite.ts';
import type { JobSnapshot, PollRecord, Store } from '../../src/store/types.ts';
import { memoryLogger } from '../helpers/log.ts';
import { createTestDatabase, postgresAvailable } from '../helpers/postgres.ts';

/**
 * The engines the store suite runs on (test/store/*.test.ts), and its fixtures.
 *
 * One suite for every engine: both must pass exactly these tests. Each test gets a fresh
 * database: a real SQLite file in a temp folder, or a new PostgreSQL database dropped after.
 * `open()` may be called more than once: every call is another process on the same data.
 */
export interface Place {
  open(): Promise<Store>;
  cleanup(): Promise<void>;
  /**
   * Whether racers may be separate connections in this test process. SQLite serves one
   * process (a second connection here would busy-wait on the event loop the first one
   * needs), so its racers share one connection; PostgreSQL's are separate pools.
   */
  replicas: boolean;
}
export const engines: [string, () => Promise<Place>][] = [
  [
    'sqlite',
    async () => {
      const dir = mkdtempSync(join(tmpdir(), 'store-'));
      return {
        open: () => openSqliteStore(join(dir, 'nested', 'bot.sqlite')),
        cleanup: async () => rmSync(dir, { recursive: true, force: true }),
        replicas: false,
      };
    },
  ],
];
if (postgresAvailable)
  engines.push([
    'postgres',
    async () => {
      const db = await createTestDatabase();
      return {
        open: () => openPostgresStore(db.url, { log: memoryLogger().log, poolSize: 4 }),
        cleanup: () => db.drop(),
        replicas: true,
      };
    },
  ]);

export const thread = {
  teamId: 'T1',
  channelId: 'C1',
  threadTs: '100.1',
  userId: 'U1',
  prompt: 'Add a quickstart',
};
export const snap = (over: Partial<JobSnapshot> = {}): JobSnapshot => ({
  jobId: 'job_1',
  status: 'active',
  model: 'm',
  repository: 'https://github.com/acme/docs',
  ref: 'main',
  prLink: null,
  ...over,
});

export const poll = (p: Partial<PollRecord> & Pick<PollRecord, 'threadId'>): PollRecord => ({
  round: 0,
  snapshot: null,
  schedule: { nextPollAt: null, pollIntervalMs: 1 },
  announcements: [],
  now: 0,
  ...p,
});
