import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { Harness, SECRETS } from '../helpers/harness.ts';
import { answers, type BotProcess, spawnBot } from '../helpers/process.ts';

/**
 * Start-up as a person meets it: the real process (`node src/main.ts`), its exit code and
 * everything it writes.
 */

let h: Harness | undefined;
let bot: BotProcess | undefined;
afterEach(async () => {
  if (bot && bot.child.exitCode === null) bot.child.kill('SIGKILL');
  bot = undefined;
  await h?.close();
  h = undefined;
});

/** Starts the bot with `env` and waits for it to exit; its code and output. */
async function failedStart(
  env: Record<string, string>,
): Promise<{ code: number | null; out: string }> {
  bot = spawnBot(env);
  const code = await bot.exited;
  return { code, out: bot.output() };
}

/** The uncommented `NAME=value` lines of .env.example, as `cp .env.example .env` leaves them. */
function copiedExample(): Record<string, string> {
  const text = readFileSync(new URL('../../.env.example', import.meta.url), 'utf8');
  return Object.fromEntries(
    [...text.matchAll(/^([A-Z][A-Z_]+)=(.*)$/gm)].map((m) => [m[1]!, m[2]!]),
  );
}

describe('start-up', () => {
  it('refuses the placeholders of .env.example by name: one line each, exit 1, no stack', async () => {
    h = await Harness.create({ mode: 'http' });
    const example = copiedExample();
    const { code, out } = await failedStart({
      ...example,
      SLACK_SIGNING_SECRET: SECRETS.signingSecret,
      SLACK_API_URL: h.slack.url,
      PORT: h.env.PORT!,
      DATABASE_URL: h.env.DATABASE_URL!,
    });
    expect(code).toBe(1);
    expect(out.trim().split('\n')).toEqual([
      'config: SLACK_BOT_TOKEN still holds the placeholder from .env.example',
      'config: MINTLIFY_API_KEY still holds the placeholder from .env.example',
      'config: MINTLIFY_PROJECT_ID still holds the placeholder from .env.example',
    ]);
    // Refused before anything was asked of Slack.
    expect(h.slack.calls).toHaveLength(0);
  });

  it('starts in distributed mode with no token, asking Slack nothing, and serves the install', async () => {
    h = await Harness.create({ mode: 'http', distributed: {} });
    bot = spawnBot({
      ...h.env,
      SLACK_CLIENT_SECRET: 'zqdist-client-secret-0123456789ab',
      SLACK_STATE_SECRET: 'zqdist-state-secret-0123456789abcdef',
    });
    await answers(`http://127.0.0.1:${h.env.PORT}/healthz`);
    const install = await fetch(`http://127.0.0.1:${h.env.PORT}/slack/install`, {
      redirect: 'manual',
    });
    expect(install.status).toBe(302);
    expect(install.headers.get('location')).toContain(h.slack.authorizeUrl);
    // No token of its own to check: Slack was asked nothing (no auth.test).
    expect(h.slack.calls).toHaveLength(0);
    bot.child.kill('SIGTERM');
    expect(await bot.exited).toBe(0);
    expect(bot.output()).not.toContain('zqdist');
  });

  it('refuses a DIGEST_CHANNEL that is not a channel id, without echoing it', async () => {
    h = await Harness.create({ mode: 'http' });
    const { code, out } = await failedStart({ ...h.env, DIGEST_CHANNEL: '#docs-traffic-zq' });
    expect(code).toBe(1);
    expect(out.trim()).toBe(
      'config: DIGEST_CHANNEL must be a channel id such as C0123ABCD, not a name (in Slack: the channel\u2019s details, at the bottom of About)',
    );
  });
});

describe('no configuration value is echoed', () => {
  /** Values no line of the bot's may contain: each distinctive, so a hit is unambiguous. */
  const distinct = {
    ALLOWED_USERS: 'U0001,U0ZQDIST1,W0ZQDIST2',
    ALLOWED_CHANNELS: 'C0001,C0ZQDIST3',
    ADMIN_USERS: 'U0ZQDIST4',
    DIGEST_CHANNEL: 'C0ZQDIST5',
    DIGEST_CRON: '17 7 * * 3',
    DIGEST_TIMEZONE: 'Pacific/Chatham',
    DOCS_BASE_URL: 'https://zqdist6.example',
    MINTLIFY_PROJECT_KEYS: 'proj_zqdist7=mint_zqdist8_key',
    LOG_LEVEL: 'info',
  };
  const fragments = ['ZQDIST', 'zqdist', '17 7 * * 3', 'Chatham', ...Object.values(SECRETS)];

  it('a start and a stop repeat no value in any line, with every variable set', async () => {
    h = await Harness.create({ mode: 'http', env: distinct });
    bot = spawnBot(h.env);
    await answers(h.url('/readyz'), 20_000);
    bot.child.kill('SIGTERM');
    expect(await bot.exited).toBe(0);
    const out = bot.output();
    expect(out).toContain('"msg":"bot.started"');
    expect(out).toContain('"msg":"digest.scheduled"');
    for (const f of [...fragments, h.dir, h.slack.url, h.api.url]) expect(out).not.toContain(f);
  });

  it('config errors and a failed start name the variable, never its value', async () => {
    h = await Harness.create({ mode: 'http' });
    const refused = await failedStart({
      ...h.env,
      ALLOWED_USERS: 'U0001,@zqdist-ann',
      ALLOWED_CHANNELS: '#zqdist-general',
      ADMIN_USERS: 'zqdist-admin',
      MINTLIFY_PROJECT_KEYS: 'mint_zqdist_key_without_project',
      DOCS_BASE_URL: 'zqdist.example',
      SLACK_BOT_TOKEN: 'xapp-zqdist-wrong-kind',
    });
    expect(refused.code).toBe(1);
    const lines = refused.out.trim().split('\n');
    expect(lines).toHaveLength(6);
    for (const name of ['ALLOWED_USERS', 'ALLOWED_CHANNELS', 'ADMIN_USERS', 'DOCS_BASE_URL'])
      expect(lines.some((l) => l.startsWith(`config: ${name} `))).toBe(true);
    expect(refused.out).not.toMatch(/zqdist/i);

    // A database the driver cannot use: its user, host and database are named, not repeated.
    for (const url of [
      'postgres://zqdistuser:zqdistpass@127.0.0.1:5432/zqdistdb',
      'postgres://zqdistuser:zqdistpass@zqdist-host.invalid:5432/zqdistdb',
    ]) {
      const failed = await failedStart({
        ...h.env,
        DATABASE_URL: url,
        DATABASE_TIMEOUT_MS: '2000',
      });
      expect(failed.code).toBe(1);
      expect(failed.out).toMatch(
        /^startup failed: could not open the PostgreSQL database: .*DATABASE_URL/m,
      );
      expect(failed.out).not.toMatch(/zqdist/i);
    }
  });
});
