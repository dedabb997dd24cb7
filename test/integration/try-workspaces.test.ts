import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { NOT_CONNECTED_TEXT } from '../../src/slack/connect-blocks.ts';
import { eventually, freePort } from '../helpers/net.ts';
import { answers } from '../helpers/process.ts';

type Json = Record<string, unknown>;

let stop: (() => Promise<void>) | undefined;
afterEach(() => stop?.());

/** The Allow page's link with this id, as a browser follows it. */
function linkOf(html: string, id: string, base: string): string | undefined {
  const href = new RegExp(`id="${id}" href="([^"]+)"`).exec(html)?.[1];
  return href && new URL(href.replaceAll('&#38;', '&'), base).toString();
}

/**
 * A person in a browser: the bot's /slack/install (its state cookie kept), the fake Slack's
 * Allow page, the workspace picked there, Allow, and back to the bot's callback.
 */
async function installIn(botUrl: string, team: string): Promise<string> {
  const start = await fetch(`${botUrl}/slack/install`, { redirect: 'manual' });
  const cookie = (start.headers.get('set-cookie') ?? '').split(';')[0] ?? '';
  let page = start.headers.get('location') ?? '';
  let html = await (await fetch(page)).text();
  const other = linkOf(html, `switch-${team}`, page);
  if (other) {
    page = other;
    html = await (await fetch(page)).text();
  }
  const allow = linkOf(html, `allow-${team}`, page);
  if (!allow) throw new Error(`no Allow for ${team} on the page: ${html.slice(0, 300)}`);
  const back = (await fetch(allow, { redirect: 'manual' })).headers.get('location') ?? '';
  const done = await fetch(back, { headers: { cookie }, redirect: 'manual' });
  return `${done.status} ${await done.text()}`;
}

/**
 * `npm run try -- --workspaces 2` as a person uses it: the real script, two workspaces
 * installed through the fake Slack's Allow page over HTTP, one connected from its Home
 * through the control API, and each workspace's /agent answered as its own.
 */
it('npm run try -- --workspaces 2: installs both workspaces through the Allow page, and each answers as its own', async () => {
  const [botPort, controlPort] = [await freePort(), await freePort()];
  const out = mkdtempSync(join(tmpdir(), 'try-ws-'));
  const chunks: string[] = [];
  const child = spawn(
    process.execPath,
    [
      'scripts/local-fakes.ts',
      ...['--bot', '--workspaces', '2', '--bot-port', `${botPort}`],
      ...['--control-port', `${controlPort}`, '--out', out],
    ],
    { env: { PATH: process.env.PATH ?? '' }, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  // The bot runs in a process group of its own: a failed test stops the script with SIGINT,
  // which stops the bot, rather than killing the script alone and leaving the bot behind.
  stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = once(child, 'exit');
      child.kill('SIGINT');
      await Promise.race([exited, new Promise((r) => setTimeout(r, 10_000))]);
      child.kill('SIGKILL');
    }
    rmSync(out, { recursive: true, force: true });
  };
  child.stdout.on('data', (c) => chunks.push(String(c)));
  child.stderr.on('data', (c) => chunks.push(String(c)));
  const control = `http://127.0.0.1:${controlPort}`;
  const bot = `http://127.0.0.1:${botPort}`;
  const post = async (path: string, body: Json) =>
    (await (
      await fetch(`${control}${path}`, { method: 'POST', body: JSON.stringify(body) })
    ).json()) as Json;
  const status = async (user: string, channel: string) => {
    const r = await post('/agent', { text: 'status', user, channel });
    const ack = r.ack as Json | string;
    const answered = (r.answers as Json[] | undefined)?.map((a) => a.text) ?? [];
    return typeof ack === 'object' && ack.text ? String(ack.text) : String(answered[0] ?? '');
  };
  await answers(`${control}/`);
  // The steps are printed once the bot is up.
  const printed = await eventually(
    () => chunks.join('').includes('Each workspace sees only its own') && chunks.join(''),
    'the steps',
    15_000,
  );
  expect(printed).toContain(`open ${bot}/slack/install, pick Globex`);
  expect(printed).toContain('"values":["proj_globex","mint_globex_local_key_0002"]');

  expect(await installIn(bot, 'T0001')).toMatch(/^200 .*Docs Agent is installed in <strong>Acme/s);
  expect(await installIn(bot, 'T0002')).toMatch(
    /^200 .*Docs Agent is installed in <strong>Globex/s,
  );
  // Installed, both: each one's /agent is its own install's, not connected yet.
  expect(await status('U0001', 'C0001')).toBe(NOT_CONNECTED_TEXT);
  expect(await status('U0002', 'C0002')).toBe(NOT_CONNECTED_TEXT);

  // Globex connects its project from its Home; Acme is still not connected.
  const home = await post('/home', { user: 'U0002' });
  expect(home.home).toContain('Connect a docs project');
  await post('/click', { home: true, action_id: 'docs_connect', user: 'U0002' });
  const submitted = await post('/submit', {
    values: ['proj_globex', 'mint_globex_local_key_0002'],
    user: 'U0002',
  });
  expect(JSON.stringify(submitted.calls)).toContain('proj_globex');
  expect(await status('U0002', 'C0002')).toContain('You have no jobs in progress');
  expect(await status('U0001', 'C0001')).toBe(NOT_CONNECTED_TEXT);

  const exited = once(child, 'exit');
  child.kill('SIGINT');
  expect((await exited)[0]).toBe(0);
}, 30_000);
