/**
 * The bot as `npm start` runs it (`node <start flags> dist/main.js`, configured from the
 * environment), started as a child process for a benchmark against fakes it names, and what
 * Slack sends it over HTTP. Shared by the benchmarks that measure the real process (ack,
 * burst).
 */
import { type ChildProcess, fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { freePort } from '../test/helpers/net.ts';
import { formEncode, signSlackRequest } from '../test/helpers/slack-requests.ts';
import { botEntry, botNodeFlags, PROJECT, SECRETS } from './measure.ts';

/** What `npm start` runs (dist/ built first if stale, out of any measured window). */
let botMain: string | undefined;
function botMainPath(): string {
  botMain ??= fileURLToPath(new URL(`../${botEntry()}`, import.meta.url));
  return botMain;
}

export interface BotProcess {
  child: ChildProcess;
  port: number;
  /** Where Slack posts commands, events and interactions (HTTP mode). */
  eventsUrl: string;
}

/** The environment a user would set: the fakes' URLs, the bench's secrets, a database. */
export function botEnv(a: {
  slackUrl: string;
  apiUrl: string;
  port: number;
  databaseUrl: string;
  socketMode?: boolean;
  extra?: Record<string, string>;
}): Record<string, string> {
  return {
    PATH: process.env.PATH ?? '',
    SLACK_BOT_TOKEN: SECRETS.botToken,
    SLACK_SIGNING_SECRET: SECRETS.signingSecret,
    SLACK_API_URL: a.slackUrl,
    PORT: String(a.port),
    MINTLIFY_API_KEY: SECRETS.apiKey,
    MINTLIFY_PROJECT_ID: PROJECT,
    MINTLIFY_API_URL: a.apiUrl,
    DATABASE_URL: a.databaseUrl,
    ...(a.socketMode ? { SLACK_APP_TOKEN: SECRETS.appToken } : {}),
    ...a.extra,
  };
}

/**
 * Forks `script` (the bot by default, with `npm start`'s node flags) with `env` plus a free
 * PORT, and waits until `/healthz` answers 200 (15 s at most).
 */
export async function startBotProcess(a: {
  env: (port: number) => Record<string, string>;
  script?: string;
  execArgv?: string[];
  name?: string;
}): Promise<BotProcess> {
  const port = await freePort();
  const main = botMainPath();
  const script = a.script ?? main;
  const name = a.name ?? 'bot';
  const child = fork(script, {
    env: a.env(port),
    execArgv: a.execArgv ?? (script === main ? botNodeFlags() : []),
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
  });
  const deadline = Date.now() + 15_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${name} exited with ${child.exitCode}`);
    const ok = await fetch(`http://127.0.0.1:${port}/healthz`).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) break;
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`${name} did not answer /healthz in 15 s`);
    }
    await new Promise((r) => setTimeout(r, 20));
  }
  return { child, port, eventsUrl: `http://127.0.0.1:${port}/slack/events` };
}

/** SIGTERM, then SIGKILL if it has not exited after `graceMs`. */
export async function stopBotProcess(child: ChildProcess, graceMs = 15_000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
  await exited;
  clearTimeout(timer);
}

/** A slash command as Slack posts it to the app (signed form); the ack's status and body. */
export async function postCommand(
  eventsUrl: string,
  fields: Record<string, string>,
): Promise<{ status: number; text: string }> {
  const body = formEncode(fields);
  const res = await fetch(eventsUrl, {
    method: 'POST',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      ...signSlackRequest(SECRETS.signingSecret, body),
    },
    body,
  });
  return { status: res.status, text: await res.text() };
}
