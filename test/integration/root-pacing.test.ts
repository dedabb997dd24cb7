import { afterEach, expect, it } from 'vitest';
import { CHANNEL, Harness } from '../helpers/harness.ts';
import { eventually } from '../helpers/net.ts';

/** Root posts of job starts go through the notifier's per-channel pacer. */
let h: Harness;
afterEach(async (ctx) => {
  if (ctx.task.result?.state === 'fail') console.error(h.logs.split('\n').slice(-30).join('\n'));
  await h.close();
});

const OTHER = 'C0002';
const rootPosts = () =>
  h.slack
    .callsTo('chat.postMessage')
    .filter((c) => c.status === 200 && String(c.args.text).startsWith('Starting'));

it("waits out a 429 on a root in its channel only: every job starts, and another channel's root goes meanwhile", async () => {
  h = await Harness.create({ mode: 'http' });
  // The harness's pace is far quicker than Slack's: Slack refuses the burst's fourth post.
  await h.start();
  h.slack.enforceRateLimits();
  for (let i = 0; i < 6; i++) await h.command(`Burst job ${i}`);
  const limited = await eventually(
    () => h.slack.callsTo('chat.postMessage').find((c) => c.status === 429),
    'a 429 on a root',
  );
  await h.command('A job elsewhere', { channel: OTHER });

  await eventually(() => h.api.createdJobs().length === 7 || undefined, 'every job', 20_000);
  expect(h.roots()).toHaveLength(6);
  expect(h.roots(OTHER)).toHaveLength(1);
  // The other channel did not wait for the paused one's Retry-After.
  const other = rootPosts().find((c) => c.args.channel === OTHER)!;
  const resumed = rootPosts().find((c) => c.args.channel === CHANNEL && c.seq > limited.seq)!;
  expect(other.seq).toBeLessThan(resumed.seq);
  expect(h.logs).toContain('root.rate_limited');
  expect(h.logs).not.toContain('job.root_post_failed');
});

it('tells someone whose root waits behind others in the channel, only them, at once', async () => {
  h = await Harness.create({ mode: 'http' });
  await h.start({ channelGapMs: 1_000 });
  const asked = [];
  for (let i = 0; i < 4; i++) asked.push(await h.command(`Queued job ${i}`));
  const idOf = (a: { responseUrl: string }) => a.responseUrl.split('/').pop();
  const notes = () =>
    h.slack.responses.filter((r) => JSON.stringify(r.body).includes('one message a second'));
  // The second, third and fourth wait one, two and three seconds: told so before their
  // roots appear. The first goes at once and is told nothing.
  await eventually(() => notes().length === 3 || undefined, 'the notes');
  expect(notes().map((r) => r.id)).toEqual([idOf(asked[1]!), idOf(asked[2]!), idOf(asked[3]!)]);
  expect(
    notes().every((r) => (r.body as { response_type?: string }).response_type === 'ephemeral'),
  );
  expect(rootPosts().length).toBeLessThan(4);
  await eventually(() => h.api.createdJobs().length === 4 || undefined, 'every job', 10_000);
  expect(notes()).toHaveLength(3);
});
