import { afterEach, expect, it } from 'vitest';
import { TIER_3 } from '../../src/jobs/rate-limits.ts';
import { CHANNEL, Harness } from '../helpers/harness.ts';
import { eventually } from '../helpers/net.ts';

let h: Harness;
afterEach(async (ctx) => {
  if (ctx.task.result?.state === 'fail') console.error(h.logs.split('\n').slice(-40).join('\n'));
  await h.close();
});

it("keeps within Slack's limits under a burst, and answers a refused /agent first", async () => {
  h = await Harness.create({ mode: 'http' });
  // Slack's own pace and Tier 3 budget, not the harness's quick ones.
  await h.start({ channelGapMs: 1_000, updateLimit: TIER_3 });
  const jobs = [];
  for (let i = 0; i < 5; i++) {
    await h.command(`Document feature ${i}`);
    const job = await eventually(() => h.api.createdJobs()[i], `job ${i}`);
    jobs.push(job);
  }
  const roots = await eventually(() => h.roots().length === 5 && h.roots(), 'five roots');
  await eventually(
    () => roots.every((r) => r.text.startsWith('Working')),
    'every root showing its job',
    10_000,
  );

  // From here Slack refuses what goes past its limits.
  h.slack.enforceRateLimits();
  const from = h.slack.calls.length;
  for (const job of jobs) h.api.complete(job.id, `https://github.com/acme/docs/pull/${job.id}`);
  const announced = () => roots.flatMap((r) => h.botReplies(r.ts));
  await eventually(() => announced().length >= 1, 'the first announcement', 10_000);
  // The service refuses the next create: its root must say so, without waiting its turn.
  h.api.inject('create', { status: 400, details: ['prompt: too long'] });
  await h.command('One job too many', { channel: 'C0002' });
  const refusal = await eventually(
    () =>
      h.slack
        .callsTo('chat.update')
        .find((c) => c.status === 200 && String(c.args.text).startsWith('Could not start')),
    'the refusal shown',
    10_000,
  );
  await eventually(() => announced().length === 5, 'every announcement', 20_000);

  // `from` counts calls; `seq` also counts response_url posts (the notes of roots that waited).
  const posts = h.slack.calls
    .slice(from)
    .filter(
      (c) => c.method === 'chat.postMessage' && c.args.channel === CHANNEL && c.status === 200,
    );
  // Five posts in one channel at Slack's pace: the refusal did not wait for them.
  expect(posts).toHaveLength(5);
  expect(refusal.seq).toBeLessThan(posts[4]!.seq);
  expect(h.slack.calls.slice(from).filter((c) => c.status === 429)).toEqual([]);
  expect(new Set(announced().map((m) => m.metadata?.event_payload.key)).size).toBe(5);
});
