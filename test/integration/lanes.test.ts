import { afterEach, expect, it } from 'vitest';
import { REPORTS_BUSY_TEXT } from '../../src/slack/listeners/report-command.ts';
import { Harness } from '../helpers/harness.ts';
import { eventually } from '../helpers/net.ts';

let h: Harness;
afterEach(async () => {
  await h.close();
});

it('answers /agent status while job starts are still waiting on the API', async () => {
  h = await Harness.create({ mode: 'http' });
  // One start at a time, the first held up by a slow create: the others wait behind it.
  await h.start({ work: { concurrency: 1, capacity: 10 } });
  h.api.setLatency('create', 1_500);
  await h.command('Document the CLI');
  await eventually(() => h.api.requestsTo('create').length > 0 || undefined, 'the first create');
  for (const prompt of ['Document the SDK', 'Document the API']) await h.command(prompt);

  const asked = await h.command('status');
  const answer = await h.slack.waitForResponse((r) => r.id === asked.responseUrl.split('/').pop());
  // The answer came before the starts queued behind the first got anywhere.
  expect(JSON.stringify(answer.body)).toContain('budget');
  expect(h.roots()).toHaveLength(1);
  expect(h.api.requestsTo('create')).toHaveLength(1);
});

it('says so in the ack when the reports lane is full, and fetches nothing', async () => {
  h = await Harness.create({ mode: 'http' });
  await h.start({ lanes: { reports: { concurrency: 1, capacity: 0 } } });
  const asked = await h.command('7d', { command: '/visitors' });
  expect(asked.body).toMatchObject({ response_type: 'ephemeral', text: REPORTS_BUSY_TEXT });
  expect(h.api.requests).toHaveLength(0);
  expect(h.logs).toContain('visitors.busy');
});
