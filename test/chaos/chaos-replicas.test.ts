import { describe } from 'vitest';
import { postgresAvailable } from '../helpers/postgres.ts';
import { chaosTest } from './short-pass.ts';

describe.skipIf(!postgresAvailable)('chaos: two replicas on one PostgreSQL database', () => {
  chaosTest(
    'postgres',
    'replicas',
    'two replicas, one killed midway and restarted: each announcement once, no job polled by both at once',
    { jobs: 40, timeoutMs: 180_000 },
  );
});
