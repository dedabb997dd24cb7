import { describe } from 'vitest';
import { postgresAvailable } from '../helpers/postgres.ts';
import { chaosTest, ITERATIONS } from './short-pass.ts';

describe.skipIf(!postgresAvailable)(
  'chaos on PostgreSQL (child-process bots, fake Slack, API emulator)',
  () => {
    chaosTest(
      'postgres',
      'kill',
      `kill -9 at ${ITERATIONS} random points: every announcement once, nothing lost, uncertain follow-ups reported`,
      { timeoutMs: 240_000 },
    );
    chaosTest('postgres', 'faults', 'API and Slack faults: no crash, no busy loop, no duplicate', {
      iterations: 15,
      timeoutMs: 120_000,
    });
    chaosTest(
      'postgres',
      'sigterm',
      'SIGTERM during a burst: exit 0, the next start finishes the rest',
      {
        iterations: 20,
        timeoutMs: 120_000,
      },
    );
  },
);
