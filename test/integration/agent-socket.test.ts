import { afterEach, beforeEach, expect, it } from 'vitest';
import { CHANNEL, Harness, SECRETS } from '../helpers/harness.ts';
import { eventually } from '../helpers/net.ts';

let h: Harness;
beforeEach(async () => {
  h = await Harness.create({ mode: 'socket' });
  await h.start();
});
afterEach(async () => {
  await h.close();
});

it('connects through apps.connections.open with the app token', () => {
  const open = h.slack.callsTo('apps.connections.open');
  expect(open.length).toBeGreaterThanOrEqual(1);
  expect(open[0]?.response).toMatchObject({ ok: true });
});

it('runs /agent over Socket Mode: acks the envelope, posts the root, creates one job', async () => {
  const ack = await h.command('Document the webhooks API');
  expect(ack.status).toBe(200);
  expect(h.socket?.acks).toHaveLength(1);
  const root = await eventually(() => h.roots()[0], 'root');
  const job = await eventually(() => h.api.createdJobs()[0], 'job');
  expect(h.api.requestsTo('create')[0]).toMatchObject({
    authorization: `Bearer ${SECRETS.apiKey}`,
    body: { prompt: 'Document the webhooks API' },
  });
  // The emulator knows the job before the bot has recorded its answer: wait for that.
  const store = await h.openStore();
  const recorded = async () =>
    (await store.findThread('T0001', CHANNEL, root.ts))?.jobId ?? undefined;
  expect(await eventually(recorded, 'the job recorded in its thread')).toBe(job.id);
  await store.close();

  h.api.complete(job.id, 'https://github.com/acme/docs/pull/5');
  await eventually(() => h.botReplies(root.ts).length === 1, 'announcement');
  expect(h.botReplies(root.ts)[0]?.text).toContain('https://github.com/acme/docs/pull/5');
});

it('answers usage in the ack payload over Socket Mode', async () => {
  const ack = await h.command('help');
  expect(ack.body).toMatchObject({
    response_type: 'ephemeral',
    text: expect.stringContaining('Usage'),
  });
  expect(h.api.requests).toHaveLength(0);
});

it('handles thread replies over Socket Mode once, even when redelivered', async () => {
  await h.command('Add a page');
  const root = await eventually(() => h.roots()[0], 'root');
  await eventually(() => h.api.createdJobs()[0], 'job');
  await eventually(() => h.slack.callsTo('chat.update').length > 0, 'root update');
  const { body } = await h.reply(root.ts, 'and a diagram');
  await eventually(() => h.api.requestsTo('message').length === 1, 'follow-up');
  await h.deliverEvent(body, 1);
  await new Promise((r) => setTimeout(r, 300));
  expect(h.api.requestsTo('message')).toHaveLength(1);
});

it('serves /healthz in Socket Mode too', async () => {
  const res = await fetch(`http://127.0.0.1:${h.env.PORT}/healthz`);
  expect(await res.json()).toMatchObject({ status: 'ok', mode: 'socket' });
});
