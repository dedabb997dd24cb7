import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { afterEach, expect, it } from 'vitest';
import { eventually, freePort } from '../helpers/net.ts';
import { answers } from '../helpers/process.ts';

let stop: (() => void) | undefined;
afterEach(() => stop?.());

it('npm run try starts the fakes and the bot on them, whatever the caller set, and Ctrl-C stops both', async () => {
  const [botPort, controlPort] = [await freePort(), await freePort()];
  const chunks: string[] = [];
  // What a real .env or shell could hold: a Socket Mode token and a real-looking database.
  const child = spawn(
    process.execPath,
    [
      'scripts/local-fakes.ts',
      '--bot',
      '--bot-port',
      `${botPort}`,
      '--control-port',
      `${controlPort}`,
    ],
    {
      env: {
        PATH: process.env.PATH ?? '',
        SLACK_APP_TOKEN: 'xapp-1-a-real-looking-token-0001',
        DATABASE_URL: 'postgres://nobody@127.0.0.1:1/nothing',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  stop = () => child.kill('SIGKILL');
  child.stdout.on('data', (c) => chunks.push(String(c)));
  child.stderr.on('data', (c) => chunks.push(String(c)));
  const control = `http://127.0.0.1:${controlPort}`;
  await answers(`http://127.0.0.1:${botPort}/healthz`);

  const ack = (await (
    await fetch(`${control}/agent`, { method: 'POST', body: '{"text":"Add a Go quickstart"}' })
  ).json()) as { status: number };
  expect(ack.status).toBe(200);
  await eventually(async () => {
    const res = (await (await fetch(`${control}/messages?channel=C0001`)).json()) as {
      messages: { text: string }[];
    };
    return res.messages.some((m) => m.text.includes('Add a Go quickstart')) || undefined;
  }, 'the root message');
  expect(chunks.join('')).toContain('"mode":"http"');

  const exited = once(child, 'exit');
  child.kill('SIGINT');
  const [code] = await exited;
  expect(code).toBe(0);
  expect(chunks.join('')).toContain('"msg":"bot.stopped"');
}, 30_000);
