/**
 * Try the real bot by hand, without real Slack or the real Mintlify API: starts the test fakes
 * (FakeSlack, ApiEmulator) on 127.0.0.1, prints the environment for the bot, and serves a small
 * JSON control API through which you act as Slack users and as the agent service.
 *
 *   npm run try    # the same with --bot: also starts the bot (`node src/main.ts`) on the fakes,
 *                  # with their environment only (no .env, no SLACK_APP_TOKEN from your shell)
 *                  # and a fresh SQLite file; Ctrl-C stops both
 *
 *   node scripts/local-fakes.ts [--bot-port 3000] [--control-port 3999] [--out slack-view-out]
 *   # in another shell: paste the printed `export` lines, then `npm start`
 *   # (or: node scripts/local-fakes.ts > /tmp/fakes.env & … then `. /tmp/fakes.env && npm start`)
 *
 *   C=http://127.0.0.1:3999
 *   curl -s $C/agent -d '{"text":"Add a quickstart"}'           # /agent as U0001 in C0001
 *   curl -s $C/jobs                                              # jobs the emulator holds
 *   curl -s $C/job/<id>/complete -d '{"prLink":"https://github.com/acme/docs/pull/1"}'
 *   curl -s -X POST $C/job/<id>/fail      # also /archive, /forget (the API then answers 404)
 *   curl -s "$C/messages?channel=C0001"                          # what the bot posted
 *   curl -s $C/reply -d '{"thread_ts":"<root ts>","text":"Also cover Windows"}'
 *   curl -s -X POST $C/dump                # writes <out>/calls.json
 *   node ../shared/tools/slack-view/render.mjs slack-view-out/calls.json slack-view-out/calls.html
 *
 * `GET /` lists every endpoint. Ctrl-C (or SIGTERM) stops the fakes. The fakes start empty each
 * time, so `rm data/local.sqlite` when you restart them (old jobs would come back as 404 / lost).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import {
  ApiEmulator,
  type EmulatedJob,
  type Fault,
  type RequestKind,
} from '../test/fakes/api-emulator.ts';
import { FakeSlack } from '../test/fakes/slack.ts';
import {
  formEncode,
  messageEvent,
  postSigned,
  slackEncode,
  slashCommand,
} from '../test/helpers/slack-requests.ts';

const DEV = {
  botToken: 'xoxb-local-dev-token',
  signingSecret: 'local-dev-signing-secret',
  apiKey: 'mint_local_dev_key',
  projectId: 'proj_local',
} as const;
const DEFAULT_CHANNEL = 'C0001';
const DEFAULT_USER = 'U0001';
const MAX_BODY = 1_000_000;

const ENDPOINTS = [
  'POST /agent {text, channel?, user?}          run /agent as a user; answers the bot ack',
  'POST /visitors {text, channel?, user?}       run /visitors as a user (e.g. text "7d")',
  'POST /reply {thread_ts, text, channel?, user?} a user replies in a thread',
  'GET  /messages?channel=C0001                  channel history as the fake Slack holds it',
  'GET  /jobs                                    jobs in the API emulator',
  'POST /job/:id/complete {prLink?: string|null} the agent finishes (prLink defaults to null)',
  'POST /job/:id/fail | /archive | /forget       the agent fails / is archived / is forgotten (404)',
  'POST /fault {kind, fault, times?}             ApiEmulator.inject (kind: create|message|get|visitors|*)',
  'POST /site {paths, seed?}                     ApiEmulator.setSite (analytics paths)',
  'POST /dump                                    write <out>/calls.json for the slack-view renderer',
];

/** A client error: answered with its status and message, never a crash. */
class HttpError extends Error {
  readonly status: number;
  constructor(status: number, message: string) {
    super(message);
    this.status = status;
  }
}

type Json = Record<string, unknown>;
/** A slash-command ack in the shape the slack-view renderer reads (`acks` in calls.json). */
interface Ack {
  command: string;
  text: string;
  channel: string;
  user: string;
  status: number;
  body: string;
  at: number;
  slackSeq: number;
}

function options(): { botPort: number; controlPort: number; out: string; bot: boolean } {
  const usage =
    'usage: node scripts/local-fakes.ts [--bot] [--bot-port 3000] [--control-port 3999] [--out slack-view-out]';
  let values: {
    'bot-port'?: string;
    'control-port'?: string;
    out?: string;
    help?: boolean;
    bot?: boolean;
  };
  try {
    ({ values } = parseArgs({
      options: {
        'bot-port': { type: 'string', default: '3000' },
        'control-port': { type: 'string', default: '3999' },
        out: { type: 'string', default: 'slack-view-out' },
        help: { type: 'boolean', short: 'h' },
        bot: { type: 'boolean', default: false },
      },
    }));
  } catch (err) {
    process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n${usage}\n`);
    process.exit(2);
  }
  if (values.help) {
    process.stdout.write(`${usage}\n`);
    process.exit(0);
  }
  const port = (name: string, v: string | undefined): number => {
    const n = Number(v);
    if (!/^\d+$/.test(v ?? '') || n < 1 || n > 65535) {
      process.stderr.write(`--${name} must be a port number (1-65535), got ${v}\n${usage}\n`);
      process.exit(2);
    }
    return n;
  };
  const botPort = port('bot-port', values['bot-port']);
  const controlPort = port('control-port', values['control-port']);
  if (botPort === controlPort) {
    process.stderr.write('--bot-port and --control-port must differ\n');
    process.exit(2);
  }
  return {
    botPort,
    controlPort,
    out: resolve(values.out || 'slack-view-out'),
    bot: values.bot === true,
  };
}

const opts = options();
const eventsUrl = `http://127.0.0.1:${opts.botPort}/slack/events`;
const slack = await FakeSlack.start();
const api = await ApiEmulator.start({ apiKey: DEV.apiKey, projectId: DEV.projectId });
const acks: Ack[] = [];
/** response_url id → who ran which command where, so the renderer puts the post in its channel. */
const responseUrls = new Map<string, { channel: string; user: string; command: string }>();

// ---- request helpers ------------------------------------------------------------------------

async function readJson(req: IncomingMessage): Promise<Json> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY) throw new HttpError(400, `body larger than ${MAX_BODY} bytes`);
    chunks.push(chunk as Buffer);
  }
  const raw = Buffer.concat(chunks).toString('utf8').trim();
  if (raw === '') return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    throw new HttpError(400, 'body is not valid JSON');
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new HttpError(400, 'body must be a JSON object');
  }
  return parsed as Json;
}

function field(body: Json, name: string, o: { fallback?: string; allowEmpty?: boolean }): string {
  const v = body[name];
  if (v === undefined || v === null) {
    if (o.fallback !== undefined) return o.fallback;
    throw new HttpError(400, `\`${name}\` is required`);
  }
  if (typeof v !== 'string') throw new HttpError(400, `\`${name}\` must be a string`);
  if (v === '' && !o.allowEmpty) throw new HttpError(400, `\`${name}\` must not be empty`);
  return v;
}

/** Slack ids are upper-case letters and digits; anything else would not resolve in the fake. */
function slackId(body: Json, name: string, fallback: string): string {
  const v = field(body, name, { fallback });
  if (!/^[A-Z0-9]+$/.test(v)) throw new HttpError(400, `\`${name}\` must look like a Slack id`);
  return v;
}

/** Posts a signed request to the bot; a bot that is not listening is a 502, not a crash. */
async function toBot(body: string): Promise<{ status: number; text: string; json?: unknown }> {
  try {
    return await postSigned(eventsUrl, DEV.signingSecret, { body });
  } catch (err) {
    const cause = err instanceof Error && err.cause instanceof Error ? err.cause.message : '';
    throw new HttpError(
      502,
      `the bot is not reachable at ${eventsUrl}${cause ? ` (${cause})` : ''}; start it with the printed env`,
    );
  }
}

function lastSlackSeq(): number {
  return Math.max(0, ...slack.calls.map((c) => c.seq), ...slack.responses.map((r) => r.seq));
}

function job(id: string): EmulatedJob {
  const j = api.jobs.get(id);
  if (!j) throw new HttpError(404, `no job ${id} in the emulator (see GET /jobs)`);
  return j;
}

function publicJob(j: EmulatedJob): Json {
  return { ...j, known: api.jobs.has(j.id) };
}

// ---- control API ----------------------------------------------------------------------------

async function command(name: '/agent' | '/visitors', body: Json): Promise<Json> {
  const text = field(body, 'text', { allowEmpty: true });
  const channel = slackId(body, 'channel', DEFAULT_CHANNEL);
  const user = slackId(body, 'user', DEFAULT_USER);
  // The renderer reads the channel from a response_url id of the form `C…-…`.
  const id = `${channel}-${randomBytes(6).toString('hex')}`;
  const responseUrl = slack.responseUrl(id);
  responseUrls.set(id, { channel, user, command: name });
  const fields = slashCommand({
    command: name,
    text: slackEncode(text), // as Slack sends typed text
    response_url: responseUrl,
    channel_id: channel,
    user_id: user,
  });
  const res = await toBot(formEncode(fields));
  acks.push({
    command: name,
    text,
    channel,
    user,
    status: res.status,
    body: res.text,
    at: Date.now(),
    slackSeq: lastSlackSeq(),
  });
  return { status: res.status, ack: res.json ?? res.text, responseUrl };
}

async function reply(body: Json): Promise<Json> {
  const thread_ts = field(body, 'thread_ts', {});
  const text = field(body, 'text', {});
  const channel = slackId(body, 'channel', DEFAULT_CHANNEL);
  const user = slackId(body, 'user', DEFAULT_USER);
  let ts: string;
  try {
    ({ ts } = slack.addUserMessage({ channel, user, text: slackEncode(text), thread_ts }));
  } catch (err) {
    throw new HttpError(404, err instanceof Error ? err.message : String(err));
  }
  const res = await toBot(
    JSON.stringify(messageEvent({ text: slackEncode(text), channel, user, ts, thread_ts })),
  );
  return { ts, status: res.status, body: res.json ?? res.text };
}

async function dump(): Promise<Json> {
  const file = join(opts.out, 'calls.json');
  await slack.dump(file);
  // Add what FakeSlack does not know: the acks, and where each response_url belongs.
  const data = JSON.parse(await readFile(file, 'utf8')) as { responses?: Json[] };
  data.responses = (data.responses ?? []).map((r) => ({
    ...r,
    ...responseUrls.get(String(r.id)),
  }));
  await writeFile(file, JSON.stringify({ ...data, acks }, null, 2));
  return { path: file, calls: slack.calls.length, responses: slack.responses.length };
}

async function route(req: IncomingMessage): Promise<{ status?: number; body: unknown }> {
  const url = new URL(req.url ?? '/', 'http://control');
  const method = req.method ?? 'GET';
  let parts: string[];
  try {
    parts = url.pathname.split('/').filter(Boolean).map(decodeURIComponent);
  } catch {
    throw new HttpError(400, `malformed path ${url.pathname}`);
  }
  const key = `${method} /${parts[0] ?? ''}`;
  const body = method === 'POST' ? await readJson(req) : {};

  switch (key) {
    case 'GET /':
      return { body: { endpoints: ENDPOINTS, eventsUrl, slack: slack.url, api: api.url } };
    case 'POST /agent':
      return { body: await command('/agent', body) };
    case 'POST /visitors':
      return { body: await command('/visitors', body) };
    case 'POST /reply':
      return { body: await reply(body) };
    case 'GET /messages': {
      const channel = url.searchParams.get('channel') || DEFAULT_CHANNEL;
      return { body: { channel, messages: slack.history(channel) } };
    }
    case 'GET /jobs': {
      const jobs = new Map(api.createdJobs().map((j) => [j.id, j]));
      for (const j of api.jobs.values()) jobs.set(j.id, j);
      return { body: { jobs: [...jobs.values()].map(publicJob) } };
    }
    case 'POST /dump':
      return { body: await dump() };
    case 'POST /fault': {
      const kinds = ['create', 'message', 'get', 'visitors', '*'];
      const kind = field(body, 'kind', {});
      if (!kinds.includes(kind)) throw new HttpError(400, `\`kind\` must be one of ${kinds}`);
      const fault = body.fault;
      if (typeof fault !== 'object' || fault === null || Array.isArray(fault)) {
        throw new HttpError(400, '`fault` must be an object, e.g. {"status":503}');
      }
      const times = body.times ?? 1;
      if (!Number.isInteger(times) || (times as number) < 1) {
        throw new HttpError(400, '`times` must be a positive integer');
      }
      try {
        api.inject(kind as RequestKind | '*', fault as Fault, times as number);
      } catch (err) {
        throw new HttpError(400, err instanceof Error ? err.message : String(err));
      }
      return { body: { ok: true, kind, fault, times } };
    }
    case 'POST /site': {
      const { paths, seed } = body;
      if (!Number.isInteger(paths) || (paths as number) < 0 || (paths as number) > 100_000) {
        throw new HttpError(400, '`paths` must be an integer between 0 and 100000');
      }
      if (seed !== undefined && !Number.isInteger(seed)) {
        throw new HttpError(400, '`seed` must be an integer');
      }
      api.setSite({
        paths: paths as number,
        ...(seed === undefined ? {} : { seed: seed as number }),
      });
      return { body: { ok: true, paths, seed: seed ?? 1 } };
    }
  }

  if (parts[0] === 'job' && parts.length === 3 && method === 'POST') {
    const [, id = '', action] = parts;
    switch (action) {
      case 'complete': {
        const prLink = body.prLink ?? null;
        if (prLink !== null && (typeof prLink !== 'string' || prLink === '')) {
          throw new HttpError(400, '`prLink` must be a URL string or null');
        }
        job(id);
        return { body: publicJob(api.complete(id, prLink)) };
      }
      case 'fail':
        job(id);
        return { body: publicJob(api.fail(id)) };
      case 'archive':
        job(id);
        return { body: publicJob(api.archive(id)) };
      case 'forget':
        api.forget(job(id).id);
        return { body: { ok: true, id, forgotten: true } };
    }
  }
  throw new HttpError(404, `no endpoint ${method} ${url.pathname} (GET / lists them)`);
}

function send(res: ServerResponse, status: number, body: unknown): void {
  if (res.headersSent) return;
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8' });
  res.end(`${JSON.stringify(body, null, 2)}\n`);
}

const control = createServer((req, res) => {
  route(req).then(
    (r) => {
      const status = r.status ?? 200;
      process.stderr.write(`[control] ${req.method} ${req.url} → ${status}\n`);
      send(res, status, r.body);
    },
    (err: unknown) => {
      const status = err instanceof HttpError ? err.status : 500;
      const message = err instanceof Error ? err.message : String(err);
      process.stderr.write(`[control] ${req.method} ${req.url} → ${status}: ${message}\n`);
      send(res, status, { error: message });
    },
  );
});

try {
  await new Promise<void>((ok, fail) => {
    control.once('error', fail);
    control.listen(opts.controlPort, '127.0.0.1', () => ok());
  });
} catch (err) {
  process.stderr.write(
    `cannot listen on 127.0.0.1:${opts.controlPort}: ${err instanceof Error ? err.message : err}\n`,
  );
  await Promise.allSettled([slack.close(), api.close()]);
  process.exit(1);
}
const controlUrl = `http://127.0.0.1:${(control.address() as AddressInfo).port}`;

const env: [string, string][] = [
  ['SLACK_BOT_TOKEN', DEV.botToken],
  ['SLACK_SIGNING_SECRET', DEV.signingSecret],
  ['SLACK_API_URL', slack.url],
  ['MINTLIFY_API_KEY', DEV.apiKey],
  ['MINTLIFY_PROJECT_ID', DEV.projectId],
  ['MINTLIFY_API_URL', api.url],
  ['PORT', String(opts.botPort)],
  ['DATABASE_URL', 'sqlite:./data/local.sqlite'],
  ['POLL_INTERVAL_MS', '1000'],
  ['POLL_MAX_INTERVAL_MS', '5000'],
];
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

const bot = opts.bot ? startBot() : undefined;
process.stdout.write(
  bot
    ? `# The bot runs on http://127.0.0.1:${opts.botPort}; control API: ${controlUrl}/ (Ctrl-C stops both)\n`
    : `${env.map(([k, v]) => `export ${k}=${v}`).join('\n')}\n` +
        `# Run the lines above in another shell, then \`npm start\`; control API: ${controlUrl}/\n`,
);

let stopping = false;
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
