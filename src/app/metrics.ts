import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import type { Budget } from '../api/budget.ts';
import type { ApiMetrics } from '../api/client.ts';
import {
  ANNOUNCEMENT_RESULTS,
  FOLLOW_UP_OUTCOMES,
  type JobMetrics,
  POLL_OUTCOMES,
} from '../jobs/ports.ts';
import type { Logger } from '../log.ts';
import type { SlackMetrics } from '../slack/chat.ts';
import { within } from './probes.ts';

/** What the gauges read when Prometheus scrapes: shared state, as every replica sees it. */
export interface MetricsSources {
  outboxDepth: () => Promise<number>;
  /** `agent`: the configured project's (single-workspace mode); each workspace's otherwise. */
  budgets: { agent?: Pick<Budget, 'remaining'> | undefined; analytics: Pick<Budget, 'remaining'> };
  log: Logger;
}

/** Every port the features count through, and the Prometheus text of it all. */
export interface Metrics extends JobMetrics, ApiMetrics, SlackMetrics {
  scrape(): Promise<{ contentType: string; body: string }>;
}

/** Poll lag in seconds: a healthy poller runs within a loop tick; minutes mean it fell behind. */
const LAG_BUCKETS_S = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300];
/**
 * How long a scrape waits for each gauge's database read: a scrape must answer within
 * Prometheus's own timeout (10 s by default) even when the database does not.
 */
export const GAUGE_READ_TIMEOUT_MS = 1_000;
/** Slack error codes are snake_case words; anything else (an exception's message) is not a label. */
const SLACK_CODE = /^[a-z0-9_]{1,64}$/;

/**
 * The bot's metrics in a registry of its own (never prom-client's global one), so that
 * two bots in one process, as in the tests, count separately.
 */
export function createMetrics(sources: MetricsSources): Metrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const registers = [registry];
  const counters = countersIn(registers);
  // Known label values start at 0, so that increase() sees their first event too.
  for (const outcome of FOLLOW_UP_OUTCOMES) counters.followUps.inc({ outcome }, 0);
  for (const outcome of POLL_OUTCOMES) counters.polls.inc({ outcome }, 0);
  for (const result of ANNOUNCEMENT_RESULTS) counters.announcements.inc({ result }, 0);
  scrapeTimeGauges(registers, sources);

  return {
    jobCreated: () => counters.jobsCreated.inc(),
    followUp: (outcome) => counters.followUps.inc({ outcome }),
    poll: (outcome, lagMs) => {
      counters.polls.inc({ outcome });
      counters.pollLag.observe(Math.max(0, lagMs) / 1000);
    },
    pollsPaused: () => counters.pollPauses.inc(),
    announcement: (result) => counters.announcements.inc({ result }),
    apiError: (operation, kind) => counters.apiErrors.inc({ operation, kind }),
    slackError: (method, code) =>
      counters.slackErrors.inc({ method, code: SLACK_CODE.test(code) ? code : 'other' }),
    scrape: async () => ({ contentType: registry.contentType, body: await registry.metrics() }),
  };
}

function countersIn(registers: Registry[]) {
  return {
    jobsCreated: new Counter({
      name: 'docs_agent_jobs_created_total',
      help: 'Agent jobs the service accepted from /agent',
      registers,
    }),
    followUps: new Counter({
      name: 'docs_agent_follow_ups_total',
      help: 'Thread replies handled, by outcome (sent to the job, refused, ignored)',
      labelNames: ['outcome'],
      registers,
    }),
    polls: new Counter({
      name: 'docs_agent_polls_total',
      help: 'Job polls, by outcome',
      labelNames: ['outcome'],
      registers,
    }),
    pollLag: new Histogram({
      name: 'docs_agent_poll_lag_seconds',
      help: 'How late a poll ran against its due time',
      buckets: LAG_BUCKETS_S,
      registers,
    }),
    pollPauses: new Counter({
      name: 'docs_agent_poll_pauses_total',
      help: "Times the Mintlify API answered a poll 429 and the project's polls paused until its Retry-After",
      registers,
    }),
    announcements: new Counter({
      name: 'docs_agent_announcements_total',
      help: 'Outbox announcements handled, by result',
      labelNames: ['result'],
      registers,
    }),
    apiErrors: new Counter({
      name: 'docs_agent_api_errors_total',
      help: 'Failed Mintlify API attempts (retried or not), by operation and error kind',
      labelNames: ['operation', 'kind'],
      registers,
    }),
    slackErrors: new Counter({
      name: 'docs_agent_slack_errors_total',
      help: 'Failed Slack Web API calls, by method and error code',
      labelNames: ['method', 'code'],
      registers,
    }),
  };
}

/**
 * Gauges read from the database at scrape time. A read that fails or does not answer
 * within GAUGE_READ_TIMEOUT_MS leaves NaN and a log line: an honest "unknown", where a zero
 * would claim an empty outbox or a spent budget.
 */
function scrapeTimeGauges(registers: Registry[], sources: MetricsSources): void {
  const { budgets, log } = sources;
  const read = async (gauge: string, value: () => Promise<number>) => {
    try {
      const v = await within(GAUGE_READ_TIMEOUT_MS, value());
      if (v !== undefined) return v;
      log.warn(
        { gauge, timeoutMs: GAUGE_READ_TIMEOUT_MS, component: 'metrics' },
        'metrics.read_timeout',
      );
    } catch (err) {
      log.warn({ err, gauge, component: 'metrics' }, 'metrics.read_failed');
    }
    return NaN;
  };
  new Gauge({
    name: 'docs_agent_outbox_depth',
    help: 'Announcements recorded and not yet posted to Slack',
    registers,
    async collect() {
      this.set(await read('outbox', sources.outboxDepth));
    },
  });
  new Gauge({
    name: 'docs_agent_budget_remaining',
    help: 'Requests left in the hourly budget window (agent: per project, analytics: per organisation)',
    labelNames: ['budget'],
    registers,
    async collect() {
      for (const [budget, b] of Object.entries(budgets)) {
        if (b) this.set({ budget }, await read(budget, () => b.remaining()));
      }
    },
  });
}
