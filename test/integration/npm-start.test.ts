import { spawnSync } from 'node:child_process';
import { afterEach, beforeAll, expect, it } from 'vitest';
import { Harness } from '../helpers/harness.ts';
import { eventually } from '../helpers/net.ts';
import {
  answers,
  type BotProcess,
  commandLine,
  descendants,
  running,
  spawnNpmStart,
} from '../helpers/process.ts';

let h: Harness;
let npm: BotProcess | undefined;
let tree: number[] = [];

beforeAll(() => {
  // What prestart would do on the first start: out of the test's time, which is about stopping.
  const run = spawnSync(process.execPath, ['scripts/build.mjs', '--if-stale'], {
    encoding: 'utf8',
  });
  expect(run.status, run.stderr).toBe(0);
}, 120_000);

afterEach(async () => {
  // Nothing may outlive the test, least of all a bot the test failed to stop.
  for (const pid of tree.filter(running)) process.kill(pid, 'SIGKILL');
  if (npm && npm.child.exitCode === null) npm.child.kill('SIGKILL');
  await h.close();
});

it('npm start runs the built JavaScript, and SIGTERM to npm stops the bot: no orphan keeps serving', async () => {
  h = await Harness.create({ mode: 'http' });
  npm = spawnNpmStart(h.env);
  await answers(h.url('/healthz'), 30_000);
  tree = descendants(npm.child.pid!);
  const bot = tree.find((pid) => commandLine(pid)?.includes('dist/main.js'));
  expect(bot, tree.map((p) => commandLine(p)).join('\n')).toBeDefined();

  npm.child.kill('SIGTERM');
  await npm.exited;
  // Every process npm started is gone within the shutdown bound, and the port is free.
  await eventually(() => !tree.some(running), 'the processes under npm to end', 15_000);
  await expect(fetch(h.url('/healthz'))).rejects.toThrow();
  expect(npm.output()).toContain('"msg":"bot.stopped"');
}, 60_000);
