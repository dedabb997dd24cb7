import { afterEach, expect, it } from 'vitest';
import { BUSY_TEXT } from '../../src/slack/listeners/agent-command.ts';
import { Harness } from '../helpers/harness.ts';
import { eventually } from '../helpers/net.ts';

let h: Harness;
afterEach(async () => {
  await h.close();
});

it('answers /agent at once while starts pile up, and says so when it cannot take more', async () => {
  // Slack calls may take 3 s here (a slow create keeps a start busy), and leases twice that.
  h = await Harness.create({ mode: 'http', env: { SLACK_TIMEOUT_MS: '3000', LEASE_MS: '6000' } });
  // One start at a time, one more waiting: a slow create keeps the first one busy.
  await h.start({ work: { concurrency: 1, capacity: 1 } });
  h.api.setLatency('create', 1_500);

  const first = await h.command('Document the CLI');
  expect(first.body).toBeNull();
  await eventually(() => h.api.requestsTo('create').length > 0 || undefined, 'first create');
  const second = await h.command('Document the SDK');
  expect(second.body).toBeNull(); // queued behind the first
  const third = await h.command('Document the API');
  expect(third.body).toMatchObject({ response_type: 'ephemeral', text: BUSY_TEXT });

  // The two that were taken both become jobs; the refused one never reaches the API.
  await eventually(() => h.api.createdJobs().length === 2 || undefined, 'two jobs');
  expect(h.api.createdJobs().map((j) => j.messages[0])).toEqual([
    'Document the CLI',
    'Document the SDK',
  ]);
  expect(h.logs).toContain('command.busy');
});
