import { postgresAvailable } from '../helpers/postgres.ts';
import { networkScenario } from './network.ts';
import { Prng } from './prng.ts';
import {
  budgetScenario,
  faultsScenario,
  killScenario,
  replicasScenario,
  type ScenarioResult,
  sigtermScenario,
} from './scenarios.ts';
import { ChaosWorld } from './world.ts';
import type { Engine } from './world-setup.ts';

export interface ChaosOptions {
  engines: readonly Engine[];
  iterations: number;
  seed?: number | undefined;
  scenarios: string[];
  /** Jobs in the replicas scenario. */
  jobs: number;
  out: (line: string) => void;
}

/** One scenario on a fresh world; the seed is printed first and in every failure. */
export async function runScenario(
  engine: Engine,
  scenario: string,
  seed: number,
  o: Pick<ChaosOptions, 'iterations' | 'jobs' | 'out'>,
): Promise<ScenarioResult> {
  const replay = `npm run chaos -- --engine ${engine} --scenarios ${scenario} --seed ${seed} --iterations ${o.iterations} --jobs ${o.jobs}`;
  o.out(`chaos: ${scenario} on ${engine}, seed=${seed} (replay: ${replay})`);
  const w = await ChaosWorld.create({ engine, seed, out: o.out });
  const t0 = Date.now();
  try {
    let r: ScenarioResult;
    if (scenario === 'kill') r = await killScenario(w, o.iterations);
    else if (scenario === 'replicas') r = await replicasScenario(w, o.jobs);
    else if (scenario === 'budget') r = await budgetScenario(w, 120, engine === 'postgres' ? 2 : 1);
    else if (scenario === 'faults')
      r = await faultsScenario(w, Math.max(3, Math.round(o.iterations / 5)));
    else if (scenario === 'network')
      r = await networkScenario(w, Math.max(4, Math.round(o.iterations / 5)));
    else if (scenario === 'sigterm')
      r = await sigtermScenario(w, Math.max(2, Math.round(o.iterations / 10)));
    else throw new Error(`unknown scenario ${scenario}`);
    for (const v of r.violations)
      o.out(`chaos: VIOLATION [${engine} ${scenario} seed=${seed}] ${v.kind}: ${v.what}`);
    if (r.violations.length) o.out(`chaos: replay with: ${replay}\n${w.logTails()}`);
    o.out(`chaos: ${scenario} on ${engine} took ${((Date.now() - t0) / 1000).toFixed(1)} s`);
    return r;
  } catch (err) {
    const what = `crashed: ${(err as Error).stack ?? String(err)}`;
    o.out(`chaos: VIOLATION [${engine} ${scenario} seed=${seed}] ${what}\n${w.logTails()}`);
    return {
      name: scenario,
      summary: '',
      violations: [{ kind: 'other', what }],
      ms: Date.now() - t0,
    };
  } finally {
    await w.close();
  }
}

/** Every asked-for scenario on every asked-for engine; returns the number of violations. */
export async function runChaos(o: ChaosOptions): Promise<number> {
  const seed = o.seed ?? Prng.randomSeed();
  o.out(`chaos: seed=${seed} engines=${o.engines.join(',')} iterations=${o.iterations}`);
  let failures = 0;
  for (const engine of o.engines) {
    if (engine === 'postgres' && !postgresAvailable) {
      o.out('chaos: postgres skipped: no PostgreSQL server (see test/helpers/postgres.ts)');
      continue;
    }
    for (const s of o.scenarios) {
      if (s === 'replicas' && engine !== 'postgres') continue; // replicas need PostgreSQL
      failures += (await runScenario(engine, s, seed, o)).violations.length;
    }
  }
  o.out(`chaos: done, seed=${seed}, ${failures} violation(s)`);
  return failures;
}
