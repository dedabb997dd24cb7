import { describe } from 'vitest';
import { chaosTest, ITERATIONS } from './short-pass.ts';

describe('chaos on SQLite (child-process bots, fake Slack, API emulator)', () => {
  chaosTest(
    'sqlite',
    'kill',
    `kill -9 at ${ITERATIONS} random points: every announcement once, nothing lost, uncertain follow-ups reported`,
    { timeoutMs: 240_000 },
  );
  chaosTest('sqlite', 'faults', 'API and Slack faults: no crash, no busy loop, no duplicate', {
    iterations: 15,
    timeoutMs: 120_000,
  });
  chaosTest(
    'sqlite',
    'network',
    'network faults on the API link (delay, black hole, reset) while people use the bot: nothing lost or doubled',
    { iterations: 20, timeoutMs: 120_000 },
  );
  chaosTest(
    'sqlite',
    'sigterm',
    'SIGTERM during a burst: exit 0, the next start finishes the rest',
    {
      iterations: 20,
      timeoutMs: 120_000,
    },
  );
});
