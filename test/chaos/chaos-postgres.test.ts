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
  },
);
