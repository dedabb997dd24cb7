import { afterEach, expect, it } from 'vitest';
import { Harness } from '../helpers/harness.ts';

let h: Harness;
afterEach(async () => {
  await h.close();
});

it('answers /agent status while job starts are still waiting on Slack', async () => {
  h = await Harness.create({ mode: 'http' });
  // One start at a time, each held up by a slow root post: starts pile up behind it.
  await h.start({ work: { concurrency: 1, capacity: 10 } });
  h.slack.setLatency('chat.postMessage', 1_500);
  for (const prompt of ['Document the CLI', 'Document the SDK', 'Document the API'])
    await h.command(prompt);

  const asked = await h.command('status');
  const answer = await h.slack.waitForResponse((r) => r.id === asked.responseUrl.split('/').pop());
  // The answer came before the first start got past its root post.
  expect(JSON.stringify(answer.body)).toContain('budget');
  expect(h.api.requestsTo('create')).toHaveLength(0);
});
