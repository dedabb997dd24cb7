import { describe, expect, it } from 'vitest';
import { Harness } from '../helpers/harness.ts';
import { eventually, sleep } from '../helpers/net.ts';
import { postgresAvailable } from '../helpers/postgres.ts';

/**
 * Two real bots on one PostgreSQL database in Socket Mode: each holds its own connection
 * and Slack spreads the envelopes over them (the fake takes turns).
 */
describe.skipIf(!postgresAvailable)('replicas in Socket Mode, each with its own connection', () => {
  it('spread commands and replies over both connections, and handle each once', async () => {
    const s = await Harness.create({ engine: 'postgres', mode: 'socket' });
    const second: string[] = [];
    try {
      await s.start();
      await s.startReplica(second);
      expect(s.socket?.openConnections()).toBe(2);
      for (let i = 0; i < 6; i++) await s.command(`Socket job ${i}`);
      const roots = await eventually(() => s.roots().length === 6 && s.roots(), 'every root');
      const jobs = await eventually(
        () => s.api.createdJobs().length === 6 && s.api.createdJobs(),
        'every job',
      );
      // Each replica took some of the commands: the envelopes went to both connections.
      await eventually(
        () => s.logs.includes('"job.created"') && second.join('').includes('"job.created"'),
        'jobs created by both replicas',
      );
      // Replies, each delivered twice (a redelivery lands on the other connection).
      for (const root of roots) {
        const { body } = await s.reply(root.ts, `More for ${root.ts}`);
        await s.deliverEvent(body, 1);
      }
      await eventually(
        () => s.api.createdJobs().every((j) => j.messages.length === 2),
        'every follow-up',
      );
      for (const job of jobs) s.api.complete(job.id, `https://github.com/acme/docs/pull/${job.id}`);
      await eventually(
        () => roots.every((r) => s.botReplies(r.ts).length >= 1),
        'an announcement in every thread',
        10_000,
      );
      await sleep(500);
      expect(s.api.requestsTo('create')).toHaveLength(6);
      expect(s.api.requestsTo('message')).toHaveLength(6);
      for (const r of roots) expect(s.botReplies(r.ts)).toHaveLength(1);
    } finally {
      await s.close();
    }
  });
});
