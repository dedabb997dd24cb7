import { afterEach, beforeEach, expect, it } from 'vitest';
import { CHANNEL, Harness } from '../helpers/harness.ts';
import { eventually } from '../helpers/net.ts';
import { parsePrometheus, sampleValue } from '../helpers/prometheus.ts';

let h: Harness;
beforeEach(async () => {
  h = await Harness.create({ mode: 'http' });
  await h.start();
});
afterEach(async (ctx) => {
  if (ctx.task.result?.state === 'fail') console.error(h.logs.split('\n').slice(-40).join('\n'));
  await h.close();
});

async function scrape() {
  const res = await fetch(h.url('/metrics'));
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
  return parsePrometheus(await res.text());
}

it('serves Prometheus text with process metrics and every bot metric, before anything happened', async () => {
  const samples = await scrape();
  expect(sampleValue(samples, 'process_cpu_user_seconds_total')).toBeGreaterThanOrEqual(0);
  expect(sampleValue(samples, 'docs_agent_jobs_created_total')).toBe(0);
  expect(sampleValue(samples, 'docs_agent_outbox_depth')).toBe(0);
  expect(sampleValue(samples, 'docs_agent_budget_remaining', { budget: 'agent' })).toBe(100);
  expect(sampleValue(samples, 'docs_agent_budget_remaining', { budget: 'analytics' })).toBe(100);
  expect(sampleValue(samples, 'docs_agent_poll_lag_seconds_count')).toBe(0);
  for (const outcome of ['changed', 'unchanged', 'failed', 'lost', 'superseded'])
    expect(sampleValue(samples, 'docs_agent_polls_total', { outcome })).toBe(0);
  for (const result of ['sent', 'retried', 'already_in_thread', 'dropped'])
    expect(sampleValue(samples, 'docs_agent_announcements_total', { result })).toBe(0);
  expect(sampleValue(samples, 'docs_agent_follow_ups_total', { outcome: 'sent' })).toBe(0);
});

it('counts a created job, the API error it got past, a follow-up and a refused Slack call', async () => {
  // A 429 is retried for a create (the service provably did not act on it).
  h.api.inject('create', { status: 429, retryAfterSec: 0 });
  await h.command('Add a quickstart');
  const root = await eventually(() => h.roots()[0], 'root');
  const job = await eventually(() => h.api.createdJobs()[0], 'job');
  await eventually(async () => {
    const store = await h.openStore();
    const t = await store.findThread('T0001', CHANNEL, root.ts).finally(() => store.close());
    return t?.jobId === job.id;
  }, 'the job recorded');
  await h.reply(root.ts, 'Also cover async clients');
  await eventually(() => h.api.requestsTo('message').length === 1, 'the follow-up');
  h.slack.removeBot('C0BOTLESS');
  await h.command('Add a changelog', { channel: 'C0BOTLESS' });

  const samples = await eventually(async () => {
    const s = await scrape();
    const refused = sampleValue(s, 'docs_agent_slack_errors_total', {
      method: 'chat.postMessage',
      code: 'not_in_channel',
    });
    // The refused start gives its budget slot back after Slack refused its root.
    const agentLeft = sampleValue(s, 'docs_agent_budget_remaining', { budget: 'agent' });
    return sampleValue(s, 'docs_agent_follow_ups_total', { outcome: 'sent' }) === 1 &&
      refused === 1 &&
      agentLeft === 97
      ? s
      : undefined;
  }, 'the counts to show');
  expect(sampleValue(samples, 'docs_agent_jobs_created_total')).toBe(1);
  expect(
    sampleValue(samples, 'docs_agent_api_errors_total', {
      operation: 'job.create',
      kind: 'rate_limited',
    }),
  ).toBe(1);
  // The refused create, the create and the follow-up each took one slot of the hourly agent
  // budget: the service counts every request that reaches it, a 429 too.
  expect(sampleValue(samples, 'docs_agent_budget_remaining', { budget: 'agent' })).toBe(97);
});

it('says NaN, not zero, for what it cannot read from the database', async () => {
  await h.botStore?.close();
  const samples = await scrape();
  expect(sampleValue(samples, 'docs_agent_outbox_depth')).toBeNaN();
  expect(sampleValue(samples, 'docs_agent_budget_remaining', { budget: 'agent' })).toBeNaN();
  expect(h.logs).toContain('metrics.read_failed');
});

it('counts polls with their lag, and announcements', async () => {
  await h.command('Add a quickstart');
  const root = await eventually(() => h.roots()[0], 'root');
  const job = await eventually(() => h.api.createdJobs()[0], 'job');
  await eventually(() => h.api.requestsTo('get').length >= 2, 'a few polls');
  h.api.complete(job.id, 'https://github.com/acme/docs/pull/3');
  await eventually(() => h.botReplies(root.ts).length === 1, 'the announcement');
  const samples = await eventually(async () => {
    const s = await scrape();
    return sampleValue(s, 'docs_agent_announcements_total', { result: 'sent' }) === 1 && s;
  }, 'the announcement counted');
  expect(sampleValue(samples, 'docs_agent_polls_total', { outcome: 'changed' })).toBe(1);
  expect(sampleValue(samples, 'docs_agent_polls_total', { outcome: 'unchanged' })).toBeGreaterThan(
    0,
  );
  const polls = ['changed', 'unchanged', 'failed', 'lost', 'superseded']
    .map((outcome) => sampleValue(samples, 'docs_agent_polls_total', { outcome }))
    .reduce((a: number, b) => a + (b ?? 0), 0);
  expect(sampleValue(samples, 'docs_agent_poll_lag_seconds_count')).toBe(polls);
  expect(sampleValue(samples, 'docs_agent_outbox_depth')).toBe(0);
});
