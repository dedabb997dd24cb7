import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { eventually, freePort } from '../helpers/net.ts';
import { answers } from '../helpers/process.ts';

let stop: (() => void) | undefined;
afterEach(() => stop?.());

interface Message {
  ts: string;
  user: string;
  text: string;
  thread_ts?: string;
  blocks?: { type?: string; elements?: { action_id?: string }[] }[];
}
type Json = Record<string, unknown>;

/**
 * `npm run try` as a person uses it: the real script as a child process, driven only through
 * its control API, asserting on what the fake Slack recorded (read back through that API).
 */
it('npm run try starts the fakes and the bot on them whatever the caller set, drives every surface, and Ctrl-C stops both', async () => {
  const [botPort, controlPort] = [await freePort(), await freePort()];
  const out = mkdtempSync(join(tmpdir(), 'try-test-'));
  const chunks: string[] = [];
  // What a real .env or shell could hold: a Socket Mode token and a real-looking database.
  const child = spawn(
    process.execPath,
    [
      'scripts/local-fakes.ts',
      '--bot',
      ...['--bot-port', `${botPort}`, '--control-port', `${controlPort}`, '--out', out],
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
  stop = () => {
    child.kill('SIGKILL');
    rmSync(out, { recursive: true, force: true });
  };
  child.stdout.on('data', (c) => chunks.push(String(c)));
  child.stderr.on('data', (c) => chunks.push(String(c)));
  const control = `http://127.0.0.1:${controlPort}`;
  const post = async (path: string, body: Json = {}) => {
    const res = await fetch(`${control}${path}`, { method: 'POST', body: JSON.stringify(body) });
    return { status: res.status, body: (await res.json()) as Json };
  };
  const get = async <T>(path: string) => (await (await fetch(`${control}${path}`)).json()) as T;
  const messages = async (channel = 'C0001') =>
    (await get<{ messages: Message[] }>(`/messages?channel=${channel}`)).messages;
  const bot = async (channel: string, text: string) =>
    (await messages(channel)).find((m) => m.user === 'UBOT' && m.text.includes(text));
  const buttonsOf = async (channel: string, ts: string) =>
    ((await messages(channel)).find((m) => m.ts === ts)?.blocks ?? [])
      .filter((b) => b.type === 'actions')
      .flatMap((b) => (b.elements ?? []).map((e) => e.action_id));
  const seen = async (user: string, text: string) =>
    (await get<{ answers: { text?: string }[] }>(`/answers?user=${user}`)).answers.some((a) =>
      a.text?.includes(text),
    );
  await answers(`http://127.0.0.1:${botPort}/healthz`);

  // /agent: the root message, with its buttons once the job runs.
  expect((await post('/agent', { text: 'Add a Go quickstart' })).status).toBe(200);
  const root = await eventually(() => bot('C0001', 'Add a Go quickstart'), 'the root message');
  await eventually(
    async () => (await buttonsOf('C0001', root.ts)).includes('job_follow_up'),
    'the buttons',
  );
  expect(chunks.join('')).toContain('"mode":"http"');

  // A sub-command, typed as in Slack: answered only to the user.
  expect((await post('/command', { text: '/agent status' })).status).toBe(200);
  await eventually(() => seen('U0001', 'Your jobs in progress'), 'the status answer');

  // A mention: the job's root goes in the mention's thread.
  const m = await post('/mention', { text: 'add a Python quickstart' });
  expect(m.body.delivered).toEqual([
    { event: 'app_mention', status: 200 },
    { event: 'message', status: 200 },
  ]);
  const inThread = await eventually(
    () => bot('C0001', 'add a Python quickstart'),
    'the root in the mention thread',
  );
  expect(inThread.thread_ts).toBe(m.body.ts);

  // A DM: the job's root in the DM.
  expect((await post('/dm', { text: 'Document the webhooks' })).status).toBe(200);
  const dmRoot = await eventually(() => bot('D0001', 'Document the webhooks'), 'the DM root');

  // Send follow-up: the click opens the modal, the submission reaches the agent.
  expect((await post('/click', { ts: root.ts, action_id: 'job_follow_up' })).status).toBe(200);
  const modal = await eventually(
    async () => (await get<{ modals: Json[] }>('/views?user=U0001')).modals[0],
    'the follow-up modal',
  );
  expect(modal.callback_id).toBe('job_follow_up_form');
  const sent = await post('/submit', { text: 'Also cover Windows' });
  expect(sent.body).toMatchObject({ view_id: modal.id, status: 200, ack: '' });
  await eventually(() => seen('U0001', 'I sent your follow-up'), 'the acknowledgement');
  const { jobs } = await get<{ jobs: { messages: string[] }[] }>('/jobs');
  expect(jobs.find((j) => j.messages[0] === 'Add a Go quickstart')?.messages).toEqual([
    'Add a Go quickstart',
    'Also cover Windows',
  ]);

  // Cancel watching, in the DM (the click finds the message's channel by its ts).
  expect((await post('/click', { ts: dmRoot.ts, action_id: 'job_unwatch' })).status).toBe(200);
  await eventually(
    async () => !(await buttonsOf('D0001', dmRoot.ts)).includes('job_unwatch'),
    'the DM root no longer watched',
  );
  // A button the message does not show: a clear 404, the script carries on.
  const missing = await post('/click', { ts: dmRoot.ts, action_id: 'job_retry' });
  expect(missing.status).toBe(404);
  expect(String(missing.body.error)).toContain('has no button job_retry');
  expect(await post('/dm', {})).toEqual({ status: 400, body: { error: '`text` is required' } });
  expect((await post('/job/nope/finish')).status).toBe(404);

  // The App Home lists the user's jobs.
  expect((await post('/home')).status).toBe(200);
  await eventually(
    async () =>
      (await get<{ homes: Record<string, string[]> }>('/views')).homes.U0001?.some((t) =>
        t.includes('Document the webhooks'),
      ),
    'the App Home',
  );

  // The first try as the README shows it: a job, finished as `latest`, read as a transcript.
  expect((await post('/agent', { text: 'Add a Rust quickstart' })).status).toBe(200);
  await eventually(() => bot('C0001', 'Add a Rust quickstart'), 'the Rust root');
  const done = await post('/job/latest/complete', {
    prLink: 'https://github.com/acme/docs/pull/7',
  });
  expect(done.body).toMatchObject({ status: 'completed', messages: ['Add a Rust quickstart'] });
  await eventually(
    async () => (await (await fetch(`${control}/transcript`)).text()).includes('acme/docs#7'),
    'the pull request in the transcript',
  );

  // The dump holds every surface for slack-view, answers placed in their channels.
  expect((await post('/dump')).status).toBe(200);
  const dump = JSON.parse(readFileSync(join(out, 'calls.json'), 'utf8')) as {
    calls: { method: string }[];
    responses: { channel?: string }[];
    acks: { command: string }[];
    messages: { text: string }[];
  };
  const methods = new Set(dump.calls.map((c) => c.method));
  for (const method of ['chat.postMessage', 'chat.postEphemeral', 'views.open', 'views.publish'])
    expect(methods).toContain(method);
  expect(dump.acks.map((a) => a.command)).toEqual(['/agent', '/agent', '/agent']);
  expect(dump.responses.every((r) => r.channel)).toBe(true);
  expect(dump.messages.map((x) => x.text)).toContain('<@UBOT> add a Python quickstart');

  const exited = once(child, 'exit');
  child.kill('SIGINT');
  const [code] = await exited;
  expect(code).toBe(0);
  expect(chunks.join('')).toContain('"msg":"bot.stopped"');
}, 60_000);
