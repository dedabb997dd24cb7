import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { eventually, freePort } from '../helpers/net.ts';
import { answers } from '../helpers/process.ts';

/**
 * `npm run try` (scripts/local-fakes.ts --bot) when its ports are taken, and the readable
 * account of what the bot posted. The real script as a child process.
 */

const cleanups: (() => void | Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** Something else listening on `port` (all interfaces, as a bot would); false if already taken. */
async function occupy(port: number): Promise<void> {
  const server: Server = createServer((_, res) => res.end('someone else'));
  const listening = await new Promise<boolean>((ok) => {
    server.once('error', () => ok(false));
    server.listen(port, () => ok(true));
  });
  // Taken already (another bot, another helper's `npm run try`): that is the case under test too.
  if (listening) cleanups.push(() => new Promise<void>((ok) => server.close(() => ok())));
}

function startTry(args: string[]): { child: ChildProcess; out: () => string; err: () => string } {
  const out: string[] = [];
  const err: string[] = [];
  const dir = mkdtempSync(join(tmpdir(), 'try-ports-'));
  const child = spawn(
    process.execPath,
    ['scripts/local-fakes.ts', '--bot', '--out', dir, ...args],
    { env: { PATH: process.env.PATH ?? '' }, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  child.stdout?.on('data', (c) => out.push(String(c)));
  child.stderr?.on('data', (c) => err.push(String(c)));
  cleanups.push(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });
  return { child, out: () => out.join(''), err: () => err.join('') };
}

it('takes free ports when 3000 and 3999 are taken, says which, and prints what the bot posted as text', async () => {
  await occupy(3000);
  await occupy(3999);
  const t = startTry([]);
  const first = await eventually(
    () =>
      /^# The bot runs on http:\/\/127\.0\.0\.1:(\d+); control API: (\S+)\/ /m.exec(t.out()) ??
      undefined,
    'the first line',
    20_000,
  );
  const [botPort, control] = [Number(first[1]), first[2]!];
  expect(botPort).not.toBe(3000);
  expect(control).not.toBe('http://127.0.0.1:3999');
  expect(t.err()).toContain(`port 3000 is taken; the bot uses ${botPort}`);
  expect(t.err()).toMatch(/port 3999 is taken; the control API uses \d+/);
  await answers(`http://127.0.0.1:${botPort}/healthz`, 20_000);

  const post = (path: string, body: object) =>
    fetch(`${control}${path}`, { method: 'POST', body: JSON.stringify(body) });
  expect((await post('/agent', { text: 'Add a <Go> quickstart & more' })).status).toBe(200);
  const text = await eventually(
    async () => {
      const res = await fetch(`${control}/transcript`);
      const body = await res.text();
      return res.headers.get('content-type')?.startsWith('text/plain') &&
        body.includes('[Send follow-up]')
        ? body
        : undefined;
    },
    'the root with its buttons in the transcript',
    20_000,
  );
  // Plain text: the channel, the prompt unescaped, buttons as labels; no Block Kit JSON.
  expect(text).toMatch(/^#C0001$/m);
  expect(text).toContain('Add a <Go> quickstart & more');
  expect(text).not.toMatch(/"type"|&lt;|&amp;|<@U/);
  // The JSON endpoint is still there for scripts.
  const json = (await (await fetch(`${control}/messages?channel=C0001`)).json()) as {
    messages: unknown[];
  };
  expect(json.messages.length).toBeGreaterThan(0);

  t.child.kill('SIGINT');
  const [code] = await once(t.child, 'exit');
  expect(code).toBe(0);
  expect(t.out()).toMatch(/# What the bot posted\n#C0001\n/);
  expect(t.out()).toContain('Add a <Go> quickstart & more');
}, 60_000);

it('refuses a port asked for with a flag that is taken, naming the flag', async () => {
  const taken = await freePort();
  await occupy(taken);
  const t = startTry(['--bot-port', String(taken), '--control-port', String(await freePort())]);
  const [code] = await once(t.child, 'exit');
  expect(code).toBe(2);
  expect(t.err()).toContain(`port ${taken} is taken`);
  expect(t.err()).toContain('pass --bot-port with a free port');
  expect(t.out()).toBe('');
}, 30_000);
