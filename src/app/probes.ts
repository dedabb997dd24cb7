import type { Logger } from '../log.ts';
import type { Answer, Endpoint } from '../slack/app.ts';

export interface ReadinessChecks {
  /** Resolves when the database answers a trivial query. */
  database: () => Promise<void>;
  /** Socket Mode: the socket is connected. HTTP: the server is listening. */
  slackConnected: () => boolean;
  /** False from the moment a shutdown begins. */
  accepting: () => boolean;
  /** Background loops whose database calls have gone unanswered too long (src/app/liveness.ts). */
  stalledLoops: () => string[];
}

/**
 * A database that takes longer than this is not ready: a probe must answer within the
 * orchestrator's own timeout (Kubernetes defaults to 1 s), so give probes at least 2 s.
 */
const DATABASE_TIMEOUT_MS = 1_000;

const json = (status: number, body: unknown): Answer => ({
  status,
  contentType: 'application/json',
  body: JSON.stringify(body),
});

/**
 * `/healthz` (liveness: the process runs and answers) and `/readyz` (readiness: send us
 * work). Readiness transitions are logged once each, not on every probe.
 */
export function probeEndpoints(opts: {
  mode: 'socket' | 'http';
  checks: ReadinessChecks;
  log: Logger;
}): Endpoint[] {
  const { mode, checks, log } = opts;
  let wasReady: boolean | undefined;

  async function readyz(): Promise<Answer> {
    const db = await databaseCheck(checks.database);
    const stalled = checks.stalledLoops();
    const state = {
      database: db.state,
      slack: checks.slackConnected() ? 'ok' : 'disconnected',
      accepting: checks.accepting() ? 'ok' : 'shutting_down',
      loops: stalled.length === 0 ? 'ok' : `stalled: ${stalled.join(', ')}`,
    };
    const failed = Object.entries(state)
      .filter(([, v]) => v !== 'ok')
      .map(([k]) => k);
    const ready = failed.length === 0;
    if (ready !== wasReady) {
      if (ready) log.info({ checks: state }, 'bot.ready');
      // The error stays in the log: an engine's error text may name hosts or users.
      else log.warn({ failed, checks: state, err: db.err }, 'bot.not_ready');
      wasReady = ready;
    }
    return json(ready ? 200 : 503, {
      status: ready ? 'ready' : 'not_ready',
      mode,
      failed,
      checks: state,
    });
  }

  return [
    { path: '/healthz', answer: async () => json(200, { status: 'ok', mode }) },
    { path: '/readyz', answer: readyz },
  ];
}

async function databaseCheck(
  ping: () => Promise<void>,
): Promise<{ state: 'ok' | 'timeout' | 'unreachable'; err?: unknown }> {
  try {
    const answered = await within(
      DATABASE_TIMEOUT_MS,
      ping().then(() => true),
    );
    return { state: answered ? 'ok' : 'timeout' };
  } catch (err) {
    return { state: 'unreachable', err };
  }
}

/** `work`'s value, or undefined if it has not settled within `ms` (it is not cancelled). */
export async function within<T>(ms: number, work: Promise<T>): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => resolve(undefined), ms);
  });
  try {
    return await Promise.race([work, late]);
  } finally {
    clearTimeout(timer);
  }
}
