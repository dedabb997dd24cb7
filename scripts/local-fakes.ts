/**
 * Try the real bot by hand, without real Slack or the real Mintlify API: starts the test fakes
 * (FakeSlack, ApiEmulator) on 127.0.0.1, prints the environment for the bot, and serves a small
 * JSON control API through which you act as Slack users and as the agent service.
 *
 *   npm run try    # the same with --bot: also starts the bot (`node src/main.ts`) on the fakes,
 *                  # with their environment only (no .env, no SLACK_APP_TOKEN from your shell)
 *                  # and a fresh SQLite file; Ctrl-C stops both
 *   npm run try -- --workspaces 2   # distributed mode: two workspaces to install with OAuth
 *                  # through the fake Slack's Allow page, two docs projects to connect
 *                  # (scripts/try/workspaces.ts); the steps are printed
 *
 *   node scripts/local-fakes.ts [--bot-port 3000] [--control-port 3999] [--out slack-view-out]
 *   # a default port that is taken gives way to a free one (said on the first line); a port
 *   # asked for with a flag that is taken is refused, naming the flag
 *   # in another shell: paste the printed `export` lines, then `npm start`
 *   # (or: node scripts/local-fakes.ts > /tmp/fakes.env & … then `. /tmp/fakes.env && npm start`)
 *   # two replicas: one PostgreSQL database for both, the control API talks to the first
 *   #   node scripts/local-fakes.ts > /tmp/fakes.env & sleep 2; . /tmp/fakes.env
 *   #   export DATABASE_URL=postgres://postgres@127.0.0.1:5432/try_replicas  # after createdb
 *   #   PORT=3000 npm start & PORT=3001 npm start
 *
 *   C=http://127.0.0.1:3999
 *   curl -s $C/agent -d '{"text":"Add a quickstart"}'           # /agent as U0001 in C0001
 *   curl -s $C/jobs                                              # jobs the emulator holds
 *   curl -s $C/job/<id>/complete -d '{"prLink":"https://github.com/acme/docs/pull/1"}'
 *   curl -s -X POST $C/job/<id>/fail      # also /archive, /forget (the API then answers 404)
 *   curl -s "$C/transcript"                  # what the bot posted, as text (printed on Ctrl-C too)
 *   curl -s "$C/messages?channel=C0001"      # the same channel's messages as Slack's JSON
 *   curl -s $C/reply -d '{"thread_ts":"<root ts>","text":"Also cover Windows"}'
 *   curl -s $C/mention -d '{"text":"add a Go quickstart"}'      # also /dm, /click, /submit, /home
 *   curl -s -X POST $C/dump                # writes <out>/calls.json
 *   node ../shared/tools/slack-view/render.mjs slack-view-out/calls.json slack-view-out/calls.html
 *
 * `GET /` lists every endpoint (served by scripts/try/control.ts). Ctrl-C (or SIGTERM) stops
 * the fakes. The fakes start empty each time, so `rm data/local.sqlite` when you restart them
 * (old jobs would come back as 404 / lost).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readManifestScopes } from '../src/manifest.ts';
import { ApiEmulator } from '../test/fakes/api-emulator.ts';
import { FakeSlack } from '../test/fakes/slack.ts';
import type { Ctx } from './try/context.ts';
import { route } from './try/control.ts';
import { botEnv, DEV, options } from './try/env.ts';
import { HttpError, send } from './try/http.ts';
import { botPortFor, listenControl, type PortChoice } from './try/ports.ts';
import { transcript } from './try/transcript.ts';
import { distributedEnv, setUpWorkspaces, workspaceSteps } from './try/workspaces.ts';

const opts = options();
const botPort = opts.bot
  ? chosenPort(await botPortFor(opts.botPort, opts.chosen.botPort))
  : opts.botPort;
const slack = await FakeSlack.start();
// The app as the manifest installs it: `/agent doctor` finds every scope it asks for.
slack.grantScopes(await readManifestScopes());
const api = await ApiEmulator.start({ apiKey: DEV.apiKey, projectId: DEV.projectId });
if (opts.workspaces === 2) setUpWorkspaces(slack, api, botPort);
const ctx: Ctx = {
  slack,
  api,
  eventsUrl: `http://127.0.0.1:${botPort}/slack/events`,
  signingSecret: DEV.signingSecret,
  out: opts.out,
  acks: [],
  responseUrls: new Map(),
};

const control = createServer((req, res) => {
  const url = new URL(req.url ?? '/', 'http://control');
  if (req.method === 'GET' && url.pathname === '/transcript') {
    const channel = url.searchParams.get('channel');
    res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' });
    res.end(transcript(slack, channel ? [channel] : undefined));
    return;
  }
  route(ctx, req).then(
    (body) => {
      process.stderr.write(`[control] ${req.method} ${req.url} → 200\n`);
      send(res, 200, body);
    },
    (err: unknown) => {
      const status = err instanceof HttpError ? err.status : 500;
      const message = err instanceof Error ? err.message : String(err);
      process.stderr.write(`[control] ${req.method} ${req.url} → ${status}: ${message}\n`);
      send(res, status, { error: message });
    },
  );
});

let controlPort: number;
try {
  controlPort = chosenPort(await listenControl(control, opts.controlPort, opts.chosen.controlPort));
} catch (err) {
  process.stderr.write(
    `cannot listen on 127.0.0.1:${opts.controlPort}: ${err instanceof Error ? err.message : err}\n`,
  );
  await Promise.allSettled([slack.close(), api.close()]);
  process.exit(1);
}
const controlUrl = `http://127.0.0.1:${controlPort}`;

/** The port a choice settled on (its note said on stderr), or the refusal and exit 2. */
function chosenPort(choice: PortChoice): number {
  if ('taken' in choice) {
    process.stderr.write(`${choice.taken}\n`);
    process.exit(2);
  }
  if (choice.note) process.stderr.write(`[control] ${choice.note}\n`);
  return choice.port;
}
const env = (opts.workspaces === 2 ? distributedEnv : botEnv)({
  slackUrl: slack.url,
  apiUrl: api.url,
  botPort,
});
/**
 * With --bot: the bot on these fakes, from their environment alone. Nothing of the caller's
 * environment but PATH and HOME reaches it, and .env is not read: a real token there (an
 * `xapp-` one would switch the bot to Socket Mode, which the fake Slack does not serve) cannot
 * point it elsewhere. A fresh SQLite file, since the fakes start empty.
 */
function startBot(): { child: ChildProcess; dir: string } {
  const dir = mkdtempSync(join(tmpdir(), 'docs-agent-try-'));
  const vars = Object.fromEntries(env);
  vars.DATABASE_URL = `sqlite:${join(dir, 'bot.sqlite')}`;
  for (const k of ['PATH', 'HOME']) if (process.env[k]) vars[k] = process.env[k];
  // Its own process group: Ctrl-C reaches this script alone, which then stops the bot with
  // one SIGTERM (a second signal would make the bot skip its graceful stop).
  const child = spawn(process.execPath, ['src/main.ts'], {
    env: vars,
    stdio: ['ignore', 'inherit', 'inherit'],
    detached: true,
  });
  process.on('exit', () => child.kill('SIGKILL'));
  child.on('exit', (code, signal) => {
    if (stopping) return;
    process.stderr.write(`[control] the bot exited (${signal ?? code}); stopping the fakes\n`);
    void shutdown('bot exit', code === 0 ? 0 : 1);
  });
  return { child, dir };
}

let stopping = false;
const bot = opts.bot ? startBot() : undefined;
if (bot) {
  ctx.botReady = untilHealthy(`http://127.0.0.1:${botPort}/healthz`);
  await ctx.botReady;
}
process.stdout.write(
  bot
    ? `# The bot runs on http://127.0.0.1:${botPort}; control API: ${controlUrl}/ (Ctrl-C stops both)\n` +
        `# What it posts: curl -s ${controlUrl}/transcript (printed here when you stop)\n`
    : `${env.map(([k, v]) => `export ${k}=${v}`).join('\n')}\n` +
        `# Run the lines above in another shell, then \`npm start\`; control API: ${controlUrl}/\n`,
);
if (opts.workspaces === 2)
  process.stdout.write(workspaceSteps(`http://127.0.0.1:${botPort}`, controlUrl));

/**
 * Resolves once the bot answers `/healthz` (a second or so after its spawn): the summary is
 * printed then, and control requests sent before wait for it instead of failing with a 502.
 * A bot that dies first exits this script (the child's exit handler above).
 */
async function untilHealthy(url: string): Promise<void> {
  for (;;) {
    const ok = await fetch(url).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) return;
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function shutdown(signal: string, code = 0): Promise<void> {
  if (stopping) process.exit(1); // a second signal: do not wait
  stopping = true;
  process.stderr.write(`[control] ${signal}: stopping${bot ? ' the bot and' : ''} the fakes\n`);
  if (bot && bot.child.exitCode === null && bot.child.signalCode === null) {
    const exited = new Promise((ok) => bot.child.once('exit', ok));
    bot.child.kill('SIGTERM');
    await exited;
  }
  if (bot) rmSync(bot.dir, { recursive: true, force: true });
  // What happened, readable, before the fakes (and their record) go.
  process.stdout.write(`\n# What the bot posted\n${transcript(slack)}`);
  control.closeAllConnections();
  await Promise.allSettled([
    new Promise<void>((ok) => control.close(() => ok())),
    slack.close(),
    api.close(),
  ]);
  process.exit(code);
}
process.on('SIGINT', () => void shutdown('SIGINT'));
process.on('SIGTERM', () => void shutdown('SIGTERM'));
