import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { expect, it } from 'vitest';
import { nodeProblem, requiredMajor } from '../scripts/check-node.mjs';

const engines = (
  JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
    engines: { node: string };
  }
).engines.node;

it('refuses an older Node by name, with how to get the right one', () => {
  expect(requiredMajor(engines)).toBe(24);
  const problem = nodeProblem('v20.20.2', engines, '/usr/bin/node');
  expect(problem).toContain('needs Node 24 or newer; this is Node v20.20.2 (/usr/bin/node)');
  expect(problem).toContain('npm install --prefix ~/.node24 node@24');
  expect(nodeProblem('v24.1.0', engines, '/x')).toBeUndefined();
  expect(nodeProblem('v25.0.0', engines, '/x')).toBeUndefined();
});

it('runs before npm start and npm test, and passes on this Node', () => {
  const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
    scripts: Record<string, string>;
  };
  // First, before the build: an older Node is told so before tsc or the bot runs.
  expect(pkg.scripts.prestart).toMatch(/^node scripts\/check-node\.mjs && /);
  expect(pkg.scripts.pretest).toBe('node scripts/check-node.mjs');
  const run = spawnSync(process.execPath, ['scripts/check-node.mjs'], { encoding: 'utf8' });
  expect(run.status).toBe(0);
  expect(run.stderr).toBe('');
});
