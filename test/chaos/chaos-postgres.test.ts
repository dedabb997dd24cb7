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
    chaosTest(
      'postgres',
      'network',
      'network faults on the database and API links (delay, black hole, failover, reset): nothing lost or doubled',
      { iterations: 20, timeoutMs: 120_000 },
    );
  },
);
