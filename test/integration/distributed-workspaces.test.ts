/**
 * Distributed mode, an installed workspace before its docs are connected, and the keys: every
 * surface answers with how to connect and nothing reaches the docs API; a wrong
 * ENCRYPTION_KEYS stops a start with one line; the doctor counts the installs and checks the
 * keys. The real bot over HTTP against the fake Slack, on both engines.
 */
import { execFile } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { NOT_CONNECTED_TEXT } from '../../src/slack/connect-blocks.ts';
import { SLACK_APP } from '../fakes/slack.ts';
import {
  A,
  ALPHA,
  closeAfterEach,
  commandFrom,
  eventFrom,
  homeOpened,
  said,
  startDistributed,
  vaultOf,
} from '../helpers/distributed.ts';
import { STATE_SECRET, TEST_KEYS } from '../helpers/distributed-env.ts';
import { type Harness, SECRETS } from '../helpers/harness.ts';
import { eventually, sleep } from '../helpers/net.ts';
import { spawnBot } from '../helpers/process.ts';
import { formEncode, postSigned } from '../helpers/slack-requests.ts';
import { engineKinds } from '../helpers/store-engines.ts';

let h: Harness;
closeAfterEach(() => h, 30);

const FROM = A;

async function start(engine: 'sqlite' | 'postgres', env: Record<string, string> = {}) {
  h = await startDistributed(engine, { env, workspaces: [ALPHA], installs: [FROM] });
}
const OTHER_KEY = `k1:${Buffer.alloc(32, 9).toString('base64')}`;

/** `npm run doctor` with the bot's environment. */
function runDoctor(env: Record<string, string>) {
  return new Promise<{ code: number; out: string }>((resolve) => {
    execFile(
      'npm',
      ['run', '--silent', 'doctor'],
      { env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env } },
      (err, stdout, stderr) =>
        resolve({
          code: err ? Number((err as { code?: unknown }).code ?? 1) : 0,
          out: stdout + stderr,
        }),
    );
  });
}

describe.each(engineKinds)('distributed mode: a workspace and its keys (%s)', (engine) => {
  it('answers every surface of a workspace with no docs connected with how to connect, calling no API', async () => {
    await start(engine);
    for (const command of ['/agent', '/visitors', '/insights']) {
      const ack = await commandFrom(h, FROM, command === '/agent' ? 'add a page' : '7d', command);
      expect([command, ack.status, ack.body]).toEqual([
        command,
        200,
        { response_type: 'ephemeral', text: NOT_CONNECTED_TEXT },
      ]);
    }
    await eventFrom(h, FROM, said('app_mention', FROM, `<@${ALPHA.botUser}> add a page`));
    await eventFrom(h, FROM, said('message', { user: 'U0A1', channel: 'D0A1' }, 'add a page'));
    const ephemerals = await h.slack.waitForCalls('chat.postEphemeral', 2);
    // The two events are acked before they are handled: in either order.
    const told = ephemerals.map((c) => [c.args.channel, c.args.user, c.args.text, c.status]);
    expect(told.sort()).toEqual([
      ['C0A1', 'U0A1', NOT_CONNECTED_TEXT, 200],
      ['D0A1', 'U0A1', NOT_CONNECTED_TEXT, 200],
    ]);
    // A button on an older message, as Slack sends its click.
    const click = {
      type: 'block_actions',
      user: { id: 'U0A1', team_id: 'T0A' },
      team: { id: 'T0A' },
      enterprise: null,
      is_enterprise_install: false,
      api_app_id: SLACK_APP.appId,
      channel: { id: 'C0A1' },
      container: { type: 'message', channel_id: 'C0A1', message_ts: '1.1' },
      trigger_id: h.slack.issueTriggerId('U0A1'),
      response_url: h.slack.responseUrl('click-1'),
      actions: [{ action_id: 'job_follow_up', block_id: 'b', type: 'button', value: '1' }],
    };
    const body = formEncode({ payload: JSON.stringify(click) });
    expect((await postSigned(h.eventsUrl, SECRETS.signingSecret, { body })).status).toBe(200);
    const answer = await h.slack.waitForResponse((r) => r.id === 'click-1');
    expect(answer.body).toMatchObject({ response_type: 'ephemeral', text: NOT_CONNECTED_TEXT });
    // The Home tab explains, and shows the installer the Connect button.
    await eventFrom(h, FROM, homeOpened('U0A1'));
    const home = await h.slack.waitFor((c) => c.method === 'views.publish');
    expect(JSON.stringify(home.args.view)).toContain('"action_id":"docs_connect"');
    const answered = () => h.logLines().filter((l) => l.msg === 'docs.not_connected');
    await eventually(() => answered().length === 7, 'seven answers');
    await sleep(200);
    expect(answered()).toHaveLength(7);
    expect(h.api.requests).toHaveLength(0);
    expect(h.slack.callsTo('chat.postMessage')).toHaveLength(0);
  });

  it('stops a start whose ENCRYPTION_KEYS cannot open what the database holds, in one line', async () => {
    await start(engine);
    await h.stopBot();
    // Another key under the same id: the stored check value does not open.
    h.env.ENCRYPTION_KEYS = OTHER_KEY;
    const wrong = "ENCRYPTION_KEYS key 'k1' does not open the stored check value (wrong key?)";
    await expect(h.start()).rejects.toThrow(wrong);
    await expect(fetch(h.url('/healthz'))).rejects.toThrow();
    // Without the key that sealed them.
    h.env.ENCRYPTION_KEYS = `k2:${Buffer.alloc(32, 2).toString('base64')}`;
    await expect(h.start()).rejects.toThrow(
      "ENCRYPTION_KEYS has no key 'k1' that sealed stored secrets",
    );
    // The process says it in one line on stderr and exits 1.
    const bot = spawnBot({ ...h.env, ENCRYPTION_KEYS: OTHER_KEY, LOG_LEVEL: 'silent' });
    expect(await bot.exited).toBe(1);
    expect(bot.output()).toBe(`startup failed: ${wrong}\n`);
  });

  it('doctor counts the installed workspaces and checks the keys, with no secret', async () => {
    await start(engine, { ADMIN_USERS: 'U0A1' });
    h.api.addProject('proj_a');
    // In Slack, from a workspace with its docs connected: its key is checked with one read.
    await vaultOf(h).connectDocs(
      { teamId: 'T0A' },
      { projectId: 'proj_a', apiKey: SECRETS.apiKey, connectedBy: 'U0A1' },
    );
    const ack = await commandFrom(h, FROM, 'doctor');
    expect(ack.status).toBe(200);
    const answer = await h.slack.waitForResponse((r) => r.id === ack.responseId, 10_000);
    const text = String((answer.body as { text: string }).text);
    expect(text).toContain(
      'Mode: distributed (OAuth install at /slack/install, 1 workspace installed, token rotation off)',
    );
    expect(text).toContain(
      "✓ Encryption keys: key 'k1' seals; 2 stored secrets open (2 with 'k1')",
    );
    // And on the server.
    const ok = await runDoctor(h.env);
    expect(ok.out).toContain('1 workspace installed');
    expect(ok.out).toContain("✓ Encryption keys: key 'k1' seals; 2 stored secrets open");
    expect(ok.code).toBe(0);
    const bad = await runDoctor({ ...h.env, ENCRYPTION_KEYS: OTHER_KEY });
    expect(bad.out).toMatch(
      /^✗ Encryption keys: ENCRYPTION_KEYS key 'k1' does not open the stored check value \(wrong key\?\)\. Fix: set ENCRYPTION_KEYS/m,
    );
    expect(bad.code).toBe(1);
    const keys = [TEST_KEYS.slice(3), OTHER_KEY.slice(3)];
    for (const secret of [SECRETS.apiKey, SLACK_APP.clientSecret, STATE_SECRET, ...keys])
      expect(text + ok.out + bad.out).not.toContain(secret);
    expect(text).toContain('✓ Docs API key: accepted for project proj_a');
    expect(h.api.requests.map((r) => r.path)).toEqual(['/v1/agent/proj_a/jobs']);
  });
});
