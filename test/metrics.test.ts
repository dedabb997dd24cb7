import { describe, expect, it } from 'vitest';
import { createMetrics } from '../src/app/metrics.ts';
import { memoryLogger } from './helpers/log.ts';
import { parsePrometheus, sampleValue } from './helpers/prometheus.ts';

const sources = (outbox = 0) => ({
  outboxDepth: async () => outbox,
  budgets: { agent: { remaining: async () => 7 }, analytics: { remaining: async () => 9 } },
  log: memoryLogger().log,
});
const read = async (m: ReturnType<typeof createMetrics>) =>
  parsePrometheus((await m.scrape()).body);

describe('metrics', () => {
  it('observes poll lag in seconds, never below zero', async () => {
    const m = createMetrics(sources());
    m.poll('changed', 1_500);
    m.poll('unchanged', -20); // a poll that ran early (clock skew between replicas)
    const s = await read(m);
    expect(sampleValue(s, 'docs_agent_polls_total', { outcome: 'changed' })).toBe(1);
    expect(sampleValue(s, 'docs_agent_poll_lag_seconds_sum')).toBe(1.5);
    expect(sampleValue(s, 'docs_agent_poll_lag_seconds_bucket', { le: '0.05' })).toBe(1);
  });

  it("counts the pauses of a project's polls after a 429", async () => {
    const m = createMetrics(sources());
    expect(sampleValue(await read(m), 'docs_agent_poll_pauses_total')).toBe(0);
    m.pollsPaused(30_000);
    expect(sampleValue(await read(m), 'docs_agent_poll_pauses_total')).toBe(1);
  });

  it('keeps Slack error codes to codes: anything else is "other"', async () => {
    const m = createMetrics(sources());
    m.slackError('chat.update', 'message_not_found');
    m.slackError('chat.update', 'socket hang up: ECONNRESET at 10.0.0.1');
    const s = await read(m);
    const code = (c: string) =>
      sampleValue(s, 'docs_agent_slack_errors_total', { method: 'chat.update', code: c });
    expect([code('message_not_found'), code('other')]).toEqual([1, 1]);
  });

  it('answers a scrape when the database does not: the gauges it would read are NaN', async () => {
    const mem = memoryLogger();
    const never = () => new Promise<number>(() => {});
    const m = createMetrics({
      outboxDepth: never,
      budgets: { agent: { remaining: never }, analytics: { remaining: async () => 9 } },
      log: mem.log,
    });
    const s = await read(m);
    expect(sampleValue(s, 'docs_agent_outbox_depth')).toBeNaN();
    expect(sampleValue(s, 'docs_agent_budget_remaining', { budget: 'agent' })).toBeNaN();
    expect(sampleValue(s, 'docs_agent_budget_remaining', { budget: 'analytics' })).toBe(9);
    expect(mem.lines().filter((l) => l.msg === 'metrics.read_timeout')).toHaveLength(2);
  });

  it('gives every bot its own registry', async () => {
    const a = createMetrics(sources(3));
    const b = createMetrics(sources(5));
    a.jobCreated();
    a.announcement('dropped');
    const [sa, sb] = [await read(a), await read(b)];
    expect(sampleValue(sa, 'docs_agent_jobs_created_total')).toBe(1);
    expect(sampleValue(sb, 'docs_agent_jobs_created_total')).toBe(0);
    expect(sampleValue(sa, 'docs_agent_announcements_total', { result: 'dropped' })).toBe(1);
    expect([
      sampleValue(sa, 'docs_agent_outbox_depth'),
      sampleValue(sb, 'docs_agent_outbox_depth'),
    ]).toEqual([3, 5]);
  });
});
