/**
 * The chaos suite, long form: child-process bots against the fake Slack and the API emulator,
 * killed, faulted and stopped at random, each run replayable from its printed seed.
 *
 *   npm run chaos -- --iterations 200 --engine both --seed 123 --scenarios kill,replicas
 *
 * --iterations  kill -9 iterations of the kill scenario (default 30)
 * --engine      sqlite | postgres | both (default both; postgres is skipped without a server)
 * --seed        replays a run (default: a fresh one, printed)
 * --scenarios   any of kill,replicas,budget,faults,network,sigterm (default all)
 * --jobs        jobs of the replicas scenario (default 200)
 * --latency     realistic | zero: how long the fakes take to answer (default realistic,
 *               or CHAOS_LATENCY)
 * Exits 1 when an invariant was broken, listing each violation with the seed to replay it.
 */
import { parseArgs } from 'node:util';
import { runChaos } from '../test/chaos/run.ts';
import { ChaosWorld } from '../test/chaos/world.ts';

// Ctrl-C: stop the bots and drop the run's database rather than leave them behind.
for (const signal of ['SIGINT', 'SIGTERM'] as const)
  process.once(signal, () => {
    process.stderr.write(`chaos: ${signal}, cleaning up\n`);
    void Promise.allSettled([...ChaosWorld.open].map((w) => w.close())).then(() =>
      process.exit(130),
    );
  });

const { values } = parseArgs({
  options: {
    iterations: { type: 'string', default: '30' },
    engine: { type: 'string', default: 'both' },
    seed: { type: 'string' },
    scenarios: { type: 'string', default: 'kill,replicas,budget,faults,network,sigterm' },
    jobs: { type: 'string', default: '200' },
    latency: { type: 'string' },
  },
});
if (values.latency) process.env.CHAOS_LATENCY = values.latency;
const engines =
  values.engine === 'both' ? (['sqlite', 'postgres'] as const) : ([values.engine] as const);
for (const e of engines) {
  if (e !== 'sqlite' && e !== 'postgres') {
    process.stderr.write(`chaos: unknown engine ${e} (sqlite | postgres | both)\n`);
    process.exit(2);
  }
}
const failures = await runChaos({
  engines: engines as readonly ('sqlite' | 'postgres')[],
  iterations: Number(values.iterations),
  seed: values.seed === undefined ? undefined : Number(values.seed),
  scenarios: values.scenarios.split(','),
  jobs: Number(values.jobs),
  out: (line) => process.stdout.write(`${line}\n`),
});
process.exit(failures > 0 ? 1 : 0);
