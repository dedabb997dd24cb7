import { expect, it } from 'vitest';
import { Prng } from './prng.ts';
import { runScenario } from './run.ts';
import type { Engine } from './world-setup.ts';

/**
 * The short chaos pass inside `npm test`: the same driver as `npm run chaos`, fewer rounds.
 * CHAOS_SEED pins the seed (it is printed either way); CHAOS_ITERATIONS changes the kills.
 */
export const SEED = process.env.CHAOS_SEED ? Number(process.env.CHAOS_SEED) : Prng.randomSeed();
export const ITERATIONS = Number(process.env.CHAOS_ITERATIONS ?? 30);

export function chaosTest(
  engine: Engine,
  scenario: string,
  title: string,
  o: { iterations?: number; jobs?: number; timeoutMs: number },
): void {
  it(title, { timeout: o.timeoutMs }, async () => {
    const lines: string[] = [];
    const out = (line: string) => {
      lines.push(line);
      if (line.startsWith('chaos: ') && !line.includes('VIOLATION')) console.log(line);
    };
    const r = await runScenario(engine, scenario, SEED, {
      iterations: o.iterations ?? ITERATIONS,
      jobs: o.jobs ?? 40,
      out,
    });
    const report = r.violations.map((v) => `- ${v.kind}: ${v.what.split('\n')[0]}`).join('\n');
    expect(
      r.violations,
      `${r.summary}\nseed=${SEED}; replay: npm run chaos -- --engine ${engine} --scenarios ${scenario} --seed ${SEED}\n${report}`,
    ).toEqual([]);
  });
}
