import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { announcementKey } from '../../src/jobs/poller.ts';
import { ANNOUNCEMENT_EVENT } from '../../src/slack/blocks.ts';
import { CHANNEL, Harness, SECRETS } from '../helpers/harness.ts';
import { eventually, sleep } from '../helpers/net.ts';
import { postgresAvailable } from '../helpers/postgres.ts';
import { answers, spawnBot } from '../helpers/process.ts';

const PR = 'https://github.com/acme/docs/pull/77';
let h: Harness;

afterEach(async () => {
  await h.close();
});

const healthy = () => answers(h.url('/healthz'));

async function kill9(child: ChildProcess): Promise<void> {
  const exited = once(child, 'exit');
  child.kill('SIGKILL');
  await exited;
}

const engines = postgresAvailable ? (['sqlite', 'postgres'] as const) : (['sqlite'] as const);

describe.each(engines)('process level (%s)', (engine) => {
  beforeEach(async () => {
    h = await Harness.create({ mode: 'http', engine });
  });

  it('loses nothing to kill -9 mid-job: after a restart the PR link is posted exactly once', async () => {
    const first = spawnBot(h.env);
    await healthy();
    await h.command('Add a quickstart');
    const root = await eventually(() => h.roots()[0], 'root');
    const job = await eventually(() => h.api.createdJobs()[0], 'job');
    await eventually(() => h.api.requestsTo('get').length > 0, 'first poll');
    await kill9(first.child);

    h.api.complete(job.id, PR);
    const second = spawnBot(h.env);
    try {
      await healthy();
      await eventually(
        () => h.botReplies(root.ts).length === 1,
        'announcement after restart',
        10_000,
      );
      await sleep(800);
      const replies = h.botReplies(root.ts);
      expect(replies).toHaveLength(1);
      expect(replies[0]?.text).toContain(PR);
      expect(second.output()).not.toContain(SECRETS.apiKey);
      expect(second.output()).not.toContain(SECRETS.botToken);
    } finally {
      second.child.kill('SIGTERM');
      await once(second.child, 'exit');
    }
  });

  it('stops gracefully on SIGTERM with exit code 0', async () => {
    const bot = spawnBot(h.env);
    await healthy();
    const exited = once(bot.child, 'exit');
    bot.child.kill('SIGTERM');
    const [code] = await exited;
    expect(code).toBe(0);
    expect(bot.output()).toContain('bot.stopped');
  });

  it('exits 1 with one readable line per configuration problem and no secret', async () => {
    const child = spawn(process.execPath, ['src/main.ts'], {
      env: { PATH: process.env.PATH ?? '', SLACK_BOT_TOKEN: 'xapp-secret-wrong-kind', PORT: 'x' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let err = '';
    child.stderr.on('data', (c) => {
      err += String(c);
    });
    const [code] = await once(child, 'exit');
    expect(code).toBe(1);
    const lines = err.trim().split('\n');
    expect(lines.every((l) => l.startsWith('config: '))).toBe(true);
    expect(lines.length).toBeGreaterThanOrEqual(4);
    expect(err).not.toContain('xapp-secret-wrong-kind');
    expect(err).not.toMatch(/at .*\.ts:\d+/); // no stack trace
  });
});

describe('in process', () => {
  beforeEach(async () => {
    h = await Harness.create({ mode: 'http' });
  });

  it('stops without waiting out a slow poll', async () => {
    await h.start();
    await h.command('Add a quickstart');
    await eventually(() => h.api.createdJobs()[0], 'job');
    h.api.inject('get', { slowMs: 5_000 });
    await eventually(() => h.api.requestsTo('get').length === 1, 'a poll in flight');
    await h.stopBot();
    // The poll was cut short, and not retried: otherwise stopping would have waited out the
    // client's timeout and sent the retries first.
    expect(h.api.requestsTo('get')).toHaveLength(1);
    expect(h.api.requestsTo('get')[0]?.status).toBeNull();
    expect(h.logs).not.toContain('poll.crashed');
  });

  it('gives back the lease of a poll it cut short, so another replica polls the job at once', async () => {
    await h.start();
    await h.command('Add a quickstart');
    const job = await eventually(() => h.api.createdJobs()[0], 'job');
    h.api.inject('get', { slowMs: 5_000 });
    await eventually(() => h.api.requestsTo('get').length === 1, 'a poll in flight');
    await h.stopBot();
    const store = await h.openStore();
    try {
      // Without the release the job would stay leased for LEASE_MS after the stop.
      const lease = { owner: 'next-replica', until: Date.now() + 60_000 };
      const due = await store.claimDueJobs(Date.now(), 10, lease);
      expect(due.map((t) => t.jobId)).toEqual([job.id]);
    } finally {
      await store.close();
    }
  });

  describe('announcements across a crash (in process)', () => {
    /** Starts a job, then stops the bot, leaving the thread as a crash would. */
    async function jobThenStop() {
      await h.start();
      await h.command('Add a quickstart');
      const root = await eventually(() => h.roots()[0], 'root');
      const job = await eventually(() => h.api.createdJobs()[0], 'job');
      await eventually(() => h.slack.callsTo('chat.update').length > 0, 'root update');
      await h.stopBot();
      return { root, job };
    }

    /** What the poller records when it sees completion; then the crash hits mid-post. */
    async function recordCompletionAttempted(threadTs: string, jobId: string) {
      const store = await h.openStore();
      const t = (await store.findThread('T0001', CHANNEL, threadTs))!;
      const key = announcementKey(jobId, t.round, 'completed');
      await store.recordPoll({
        threadId: t.id,
        round: t.round,
        snapshot: {
          jobId,
          status: 'completed',
          model: t.model,
          repository: t.repository,
          ref: t.ref,
          prLink: PR,
        },
        schedule: { nextPollAt: null, pollIntervalMs: 100 },
        announcements: [{ key, kind: 'completed', prLink: PR }],
        now: Date.now(),
      });
      const [item] = await store.pendingAnnouncements(Date.now(), 10);
      await store.markAnnouncementAttempt(item!.id, item!.attempts, Date.now()); // lease already over
      await store.close();
      return key;
    }

    it('does not re-post an announcement the thread already holds', async () => {
      const { root, job } = await jobThenStop();
      h.api.complete(job.id, PR);
      const key = await recordCompletionAttempted(root.ts, job.id);
      // The post had reached Slack before the crash.
      await fetch(`${h.slack.url}chat.postMessage`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${SECRETS.botToken}`,
          'content-type': 'application/json',
        },
        body: JSON.stringify({
          channel: CHANNEL,
          thread_ts: root.ts,
          text: `done: ${PR}`,
          metadata: { event_type: ANNOUNCEMENT_EVENT, event_payload: { key } },
        }),
      });
      await h.start();
      await eventually(() => h.logs.includes('announce.already_in_thread'), 'thread check');
      await sleep(300);
      expect(h.botReplies(root.ts)).toHaveLength(1);
      expect(h.slack.callsTo('conversations.replies').length).toBeGreaterThanOrEqual(1);
    });

    it('posts an attempted announcement that never reached the thread, once', async () => {
      const { root, job } = await jobThenStop();
      h.api.complete(job.id, PR);
      await recordCompletionAttempted(root.ts, job.id);
      await h.start();
      await eventually(() => h.botReplies(root.ts).length === 1, 'announcement');
      await sleep(300);
      expect(h.botReplies(root.ts)).toHaveLength(1);
    });

    it('tells the thread when a crash cut a job start short, without resending the create', async () => {
      await h.start();
      await h.stopBot();
      const store = await h.openStore();
      const res = await fetch(`${h.slack.url}chat.postMessage`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${SECRETS.botToken}`,
          'content-type': 'application/json',
        },
        body: JSON.stringify({ channel: CHANNEL, text: 'Starting: docs agent job' }),
      });
      const { ts } = (await res.json()) as { ts: string };
      await store.createThread(
        { teamId: 'T0001', channelId: CHANNEL, threadTs: ts, userId: 'U0001', prompt: 'x' },
        Date.now() - 6 * 60_000, // older than any create call takes
      );
      await store.close();
      await h.start();
      await eventually(
        () => h.slack.callsTo('chat.update').some((c) => c.args.ts === ts),
        'root update',
      );
      const shown = JSON.stringify(h.slack.history(CHANNEL).find((m) => m.ts === ts)?.blocks);
      expect(shown).toContain('cannot tell whether it started');
      expect(h.api.requestsTo('create')).toHaveLength(0);
    });
  });
});
