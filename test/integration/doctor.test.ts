import { execFile } from 'node:child_process';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { readManifestScopes } from '../../src/manifest.ts';
import { SLACK_IDS } from '../fakes/slack.ts';
import { CHANNEL, Harness, PROJECT, SECRETS, USER } from '../helpers/harness.ts';
import { eventually } from '../helpers/net.ts';
import { postgresAvailable } from '../helpers/postgres.ts';
import { appMentionEvent } from '../helpers/slack-requests.ts';

const ROOT = dirname(dirname(dirname(fileURLToPath(import.meta.url))));

let h: Harness | undefined;
afterEach(async (ctx) => {
  if (ctx.task.result?.state === 'fail' && h)
    console.error(h.logs.split('\n').slice(-40).join('\n'));
  await h?.close();
  h = undefined;
});

const scopes = await readManifestScopes();

/** Runs `/agent doctor` and returns the one ephemeral answer. */
async function doctorAnswer(harness: Harness, user = USER): Promise<string> {
  const ack = await harness.command('doctor', { user });
  expect(ack.status).toBe(200);
  const id = ack.responseUrl.split('/').pop();
  const answer = await harness.slack.waitForResponse((r) => r.id === id, 10_000);
  expect(answer.body).toMatchObject({ response_type: 'ephemeral' });
  return String((answer.body as { text: string }).text);
}

function expectNoSecret(text: string) {
  for (const secret of Object.values(SECRETS)) expect(text).not.toContain(secret);
  expect(text).not.toContain('mint_wrong_key');
}

describe('/agent doctor', () => {
  it('names the missing scope and the rejected API key, each with its fix, only to the person', async () => {
    h = await Harness.create({
      mode: 'http',
      env: { MINTLIFY_API_KEY: 'mint_wrong_key_0123456789', ADMIN_USERS: USER },
    });
    await h.start();
    h.slack.grantScopes(scopes.filter((s) => s !== 'reactions:write'));
    const text = await doctorAnswer(h);
    const lines = text.split('\n');
    expect(lines.slice(0, 2)).toEqual([
      '*Doctor*',
      'Mode: single workspace (bot token from the environment)',
    ]);
    expect(lines).toContainEqual(expect.stringMatching(/^✓ Node: v\d+/));
    expect(lines).toContainEqual(
      expect.stringMatching(/^✓ Slack bot token: accepted for @docsbot/),
    );
    expect(lines).toContainEqual(
      expect.stringMatching(/^✗ Bot scopes: missing reactions:write .*Fix: add them under OAuth/),
    );
    expect(lines).toContainEqual(expect.stringMatching(/^✓ Slack app token: not set: HTTP mode/));
    expect(lines).toContainEqual(
      expect.stringMatching(
        /^✗ Mintlify API key and project proj_docs: the key was rejected \(401\)\. Fix: set MINTLIFY_API_KEY/,
      ),
    );
    expect(lines).toContainEqual(expect.stringMatching(/^✓ Database sqlite:.*: answers/));
    expect(lines.at(-1)).toMatch(/^Some checks failed/);
    expectNoSecret(text);
    // Nothing was posted in the channel; the one API call was a read, and no agent use.
    expect(h.slack.callsTo('chat.postMessage')).toHaveLength(0);
    expect(h.api.requests.map((r) => [r.kind, r.status])).toEqual([['visitors', 401]]);
    expect(h.logLines().some((l) => l.msg === 'command.doctor')).toBe(true);
  });

  it('is all green against healthy fakes, Socket Mode included', async () => {
    h = await Harness.create({ mode: 'socket', env: { ADMIN_USERS: USER } });
    await h.start();
    h.slack.grantScopes([...scopes, 'users:read']);
    const text = await doctorAnswer(h);
    const lines = text.split('\n').slice(1);
    expect(lines.filter((l) => l.startsWith('✓'))).toHaveLength(7);
    expect(lines).toContainEqual(
      expect.stringMatching(/^✓ Embeddings endpoint: off \(INSIGHTS_EMBEDDINGS_URL unset\)/),
    );
    expect(lines).toContainEqual(
      expect.stringMatching(/^✓ Slack app token: Socket Mode: Slack opened a connection URL/),
    );
    expect(lines).toContainEqual(
      expect.stringMatching(
        /^✓ Mintlify API key and project proj_docs: accepted \(one analytics request/,
      ),
    );
    expect(lines.at(-1)).toBe('All checks passed.');
    expect(h.api.requestsTo('create')).toHaveLength(0);
    expectNoSecret(text);
  });
});

/** What only an admin may see: where the database is, the workspace, the project. */
function expectNoSetupDetail(text: string, harness: Harness) {
  for (const detail of [
    harness.dir,
    'sqlite',
    'postgres',
    '127.0.0.1',
    SLACK_IDS.team,
    SLACK_IDS.teamName,
    SLACK_IDS.botUserName,
    PROJECT,
    'mint_',
  ])
    expect(text).not.toContain(detail);
}

describe('/agent doctor for someone not in ADMIN_USERS', () => {
  it('answers one health line, with no host, path, id or key', async () => {
    h = await Harness.create({ mode: 'http', env: { ADMIN_USERS: 'U0ADMIN' } });
    await h.start();
    h.slack.grantScopes(scopes.filter((s) => s !== 'reactions:write'));
    const failing = await doctorAnswer(h, 'U0002');
    expect(failing).toBe('✗ 1 check failed — ask an admin to run `/agent doctor` for the details.');
    expectNoSetupDetail(failing, h);
    h.slack.grantScopes(scopes);
    const passing = await doctorAnswer(h, 'U0002');
    expect(passing).toBe('✓ All checks passed.');
    // The admin gets the full report, from the same checks.
    const full = await doctorAnswer(h, 'U0ADMIN');
    expect(full).toContain(`✓ Slack bot token: accepted for @${SLACK_IDS.botUserName} in Acme`);
    expect(full).toContain(h.dir);
    expect(
      h
        .logLines()
        .filter((l) => l.msg === 'command.doctor')
        .map((l) => l.full),
    ).toEqual([false, false, true]);
  });

  it('without any admin configured, says who can see the details', async () => {
    h = await Harness.create({
      mode: 'http',
      env: { MINTLIFY_API_KEY: 'mint_wrong_key_0123456789' },
    });
    await h.start();
    const text = await doctorAnswer(h);
    expect(text).toMatch(
      /^✗ 2 checks failed — whoever runs the bot can see which with `npm run doctor`\.$/,
    );
    expectNoSetupDetail(text, h);
  });
});

describe('/agent doctor and the analytics budget', () => {
  it('spends one analytics request for 100 runs, commands and mentions, admins or not', async () => {
    h = await Harness.create({ mode: 'http', env: { ADMIN_USERS: USER } });
    await h.start();
    h.slack.grantScopes(scopes);
    const answers: string[] = [];
    for (let batch = 0; batch < 10; batch++) {
      const runs = Array.from({ length: 9 }, (_, i) =>
        doctorAnswer(h as Harness, i % 3 === 0 ? USER : `U00${10 + i}`),
      );
      answers.push(...(await Promise.all(runs)));
      const m = `<@${SLACK_IDS.botUser}> doctor`;
      const { ts } = h.slack.addUserMessage({ channel: CHANNEL, user: 'U0002', text: m });
      await h.deliverEvent(appMentionEvent({ text: m, channel: CHANNEL, user: 'U0002', ts }));
    }
    await eventually(() => h?.slack.ephemerals.length === 10, 'the ten mention answers');
    expect(answers).toHaveLength(90);
    for (const e of h.slack.ephemerals) expect(e.text).toBe('✓ All checks passed.');
    const full = answers.filter((a) => a.startsWith('*Doctor*'));
    expect(full).toHaveLength(30);
    expect(full.at(-1)).toMatch(
      /accepted \(result of the probe under a minute ago; the API is probed at most once every 10 minutes\)/,
    );
    expect(h.api.requestsTo('visitors')).toHaveLength(1);
    expect(h.api.requestsTo('create')).toHaveLength(0);
  });
});

describe.skipIf(!postgresAvailable)('/agent doctor with a password in the query string', () => {
  it('shows the database URL to an admin with the password masked, and logs it nowhere', async () => {
    h = await Harness.create({ mode: 'http', engine: 'postgres', env: { ADMIN_USERS: USER } });
    const password = 'hunter2-query-password';
    // Trust auth on the test server: the password is accepted, and never needed.
    h.env.DATABASE_URL = `${h.env.DATABASE_URL}?sslmode=disable&password=${password}`;
    await h.start();
    h.slack.grantScopes(scopes);
    const text = await doctorAnswer(h);
    expect(text).toMatch(
      /^✓ Database postgres:\/\/postgres@127\.0\.0\.1:5432\/\S+\?sslmode=disable&amp;password=\*\*\*: answers/m,
    );
    expect(text).not.toContain(password);
    expect(h.logs).not.toContain(password);
  });
});

/** `npm run doctor` as a person would run it, with the environment instead of a .env. */
function runDoctor(env: Record<string, string>) {
  return new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    execFile(
      'npm',
      ['run', '--silent', 'doctor'],
      {
        cwd: ROOT,
        env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env },
        timeout: 30_000,
      },
      (err, stdout, stderr) => {
        const code = err ? Number((err as { code?: unknown }).code ?? 1) : 0;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

describe('npm run doctor', () => {
  it('exits 1 with one fixable line per failure, and no secret', async () => {
    h = await Harness.create({ mode: 'http', env: { MINTLIFY_PROJECT_ID: 'proj_unknown' } });
    h.slack.revokeToken(SECRETS.botToken);
    const r = await runDoctor(h.env);
    expect(r.code).toBe(1);
    const lines = r.stdout.trim().split('\n');
    expect(lines[0]).toBe('Docs Agent doctor');
    expect(lines).toContainEqual(
      expect.stringMatching(
        /^✗ Slack bot token: auth.test answered invalid_auth\. Fix: copy the Bot User OAuth Token/,
      ),
    );
    expect(lines).toContainEqual(expect.stringMatching(/^✗ Bot scopes: not checked/));
    expect(lines).toContainEqual(
      expect.stringMatching(
        /^✗ Mintlify API key and project proj_unknown: no such project for this key \(404\)\. Fix: copy MINTLIFY_PROJECT_ID/,
      ),
    );
    expect(lines).toContainEqual(expect.stringMatching(/^✓ Database /));
    expect(lines.at(-1)).toMatch(/^Some checks failed/);
    expectNoSecret(r.stdout + r.stderr);
  });

  it('exits 0 when every check passes', async () => {
    h = await Harness.create({ mode: 'http' });
    h.slack.grantScopes(scopes);
    const r = await runDoctor(h.env);
    expect(r.stdout.split('\n').slice(0, 2)).toEqual([
      'Docs Agent doctor',
      'Mode: single workspace (bot token from the environment)',
    ]);
    expect(r.stdout).toContain('All checks passed.');
    expect(r.stdout.split('\n').filter((l) => l.startsWith('✓'))).toHaveLength(7);
    expect(r.code).toBe(0);
    expectNoSecret(r.stdout + r.stderr);
    // The one read went through the shared analytics budget, in the bot's database.
    const store = await h.openStore();
    expect(await store.budgetUsed('analytics', 0)).toBe(1);
    await store.close();
  });

  it('in distributed mode says so, and checks no token or key the environment does not hold', async () => {
    h = await Harness.create({ mode: 'http' });
    const { SLACK_BOT_TOKEN, MINTLIFY_API_KEY, MINTLIFY_PROJECT_ID, ...shared } = h.env;
    const oauth = {
      SLACK_CLIENT_ID: '1234567890.9876543210',
      SLACK_CLIENT_SECRET: 'zqdist-client-secret-0123456789ab',
      SLACK_STATE_SECRET: 'zqdist-state-secret-0123456789abcdef',
      SLACK_TOKEN_ROTATION: 'true',
      ENCRYPTION_KEYS: `k1:${Buffer.alloc(32, 7).toString('base64')}`,
    };
    const r = await runDoctor({ ...shared, ...oauth });
    expect(r.stdout.trim().split('\n')).toEqual([
      'Docs Agent doctor',
      'Mode: distributed (OAuth install at /slack/install, 0 workspaces installed, token rotation on)',
      expect.stringMatching(/^✓ Node: /),
      expect.stringMatching(/^✓ Slack app token: not set: HTTP mode/),
      expect.stringMatching(/^✓ Database /),
      "✓ Encryption keys: key 'k1' seals; 0 stored secrets open",
      'All checks passed.',
    ]);
    expect(r.code).toBe(0);
    expect(r.stdout + r.stderr).not.toMatch(/zqdist|1234567890/);
    // Neither Slack nor the API was asked anything with a token or key.
    expect(h.slack.calls).toHaveLength(0);
    expect(h.api.requests).toHaveLength(0);
  });

  it('lists configuration problems instead of checking', async () => {
    h = await Harness.create({ mode: 'http', env: { ALLOWED_USERS: 'ann' } });
    const r = await runDoctor(h.env);
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/^✗ Configuration: ALLOWED_USERS must be comma-separated/m);
  });
});
