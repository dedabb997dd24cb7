import { afterEach, expect, it } from 'vitest';
import { ROTATE_KEY_QUESTIONS } from '../fakes/analytics-insights-seed.ts';
import type { StoredMessage } from '../fakes/slack.ts';
import { CHANNEL, Harness } from '../helpers/harness.ts';
import { eventually } from '../helpers/net.ts';
import { gapId } from '../helpers/reports.ts';

/** A gap whose Draft it found the starts lane full is not left claimed: it can be drafted again. */

let h: Harness;
afterEach(async () => {
  await h.close();
});

const isRotate = (text: string) => ROTATE_KEY_QUESTIONS.some((q) => text.includes(`“${q}”`));

it('gives the gap back when its job cannot start for a full lane, so a later Draft it starts it', async () => {
  h = await Harness.create({ env: { SLACK_TIMEOUT_MS: '3000', LEASE_MS: '6000' } });
  // One start at a time and one waiting; slow creates keep both taken.
  await h.start({ work: { concurrency: 1, capacity: 1 } });
  await h.command('14d', { command: '/insights' });
  const report = await eventually(
    () =>
      h.slack
        .history(CHANNEL)
        .find((m: StoredMessage) => m.metadata?.event_type === 'docs_insights_report'),
    'the report',
    10_000,
  );
  const id = gapId(report, isRotate);
  await h.choose(report.ts, `draft:${id}`);
  const { view } = await eventually(() => h.slack.views[0], 'the form');

  h.api.setLatency('create', 1_500);
  await h.command('Document the CLI');
  await eventually(() => h.api.requestsTo('create').length > 0 || undefined, 'first create');
  await h.command('Document the SDK'); // waits in the lane: it is full now
  const sent = await h.submitView(view, { draft: { prompt: 'Cover key rotation' } });
  expect(sent.body).toBeNull(); // the form closes; the answer comes in the channel
  await eventually(
    () => h.slack.calls.some((c) => String(c.args.text).includes("I'm very busy right now")),
    'the busy answer',
  );
  expect(h.logs).toContain('insight_draft.busy');

  // Once the lane has room, Draft it on the same gap opens a form again and starts its job.
  await eventually(() => h.api.createdJobs().length === 2 || undefined, 'the two commands');
  h.api.setLatency('create', 0);
  await h.choose(report.ts, `draft:${id}`);
  const again = await eventually(() => h.slack.views[1], 'a second form');
  await h.submitView(again.view, { draft: { prompt: 'Cover key rotation, now' } });
  const job = await eventually(
    () => h.api.createdJobs().find((j) => j.messages[0] === 'Cover key rotation, now'),
    'the gap job',
  );
  expect(job).toBeDefined();
  expect(h.logs).not.toContain('insight_gap.already_drafted');
});
