import { afterEach, describe, expect, it } from 'vitest';
import { Harness, PROJECT } from '../helpers/harness.ts';
import { eventually, sleep } from '../helpers/net.ts';
import { postgresAvailable } from '../helpers/postgres.ts';

/**
 * A start takes its agent budget slot before anything is posted: the real bot, the fake
 * Slack and the API emulator, on SQLite and on two PostgreSQL replicas.
 */
let h: Harness;
afterEach(async () => {
  await h.close();
});

const HOUR = 3_600_000;
const SPENT = 'budget (100 jobs and messages per hour) is used up';
const bucket = `agent:${PROJECT}`;

/** Uses of the project's agent budget recorded in the last hour. */
async function used(): Promise<number> {
  const store = await h.openStore();
  try {
    return await store.budgetUsed(bucket, Date.now() - HOUR);
  } finally {
    await store.close();
  }
}

async function spend(n: number): Promise<void> {
  const store = await h.openStore();
  for (let i = 0; i < n; i++) await store.takeBudgetSlot(bucket, Date.now(), HOUR, 100);
  await store.close();
}

const refusals = () => h.slack.responses.filter((r) => JSON.stringify(r.body).includes(SPENT));

describe('the agent budget, reserved before the root', () => {
  it('starts 100 of 200 commands and tells the other 100 privately, posting no root for them', {
    timeout: 120_000,
  }, async () => {
    h = await Harness.create({ mode: 'http' });
    await h.start();
    const n = 200;
    const sends: Promise<unknown>[] = [];
    for (let i = 0; i < n; i++) {
      sends.push(h.command(`Budget job ${i}`, { user: `U${String(i).padStart(4, '0')}` }));
      if (sends.length === 20) await Promise.all(sends.splice(0));
    }
    await Promise.all(sends);
    await eventually(() => refusals().length === 100 || undefined, 'the refusals', 60_000);
    await eventually(() => h.api.createdJobs().length === 100 || undefined, 'the jobs', 60_000);
    await sleep(300); // room for a root or a create too many
    expect(h.roots()).toHaveLength(100);
    expect(h.api.requestsTo('create')).toHaveLength(100);
    for (const r of refusals()) expect(r.body).toMatchObject({ response_type: 'ephemeral' });
    // Who was refused never appears in the channel: every root is someone who got a job.
    const refused = new Set(refusals().map((r) => r.id));
    expect(refused.size).toBe(100);
    const started = new Set(h.roots().map((m) => m.text));
    expect(started.size).toBe(100);
    // One slot per job: the create counted the slot its start reserved, not one more.
    expect(await used()).toBe(100);
  });

  it('counts a started job once, and gives the slot back when the root cannot be posted', async () => {
    h = await Harness.create({ mode: 'http' });
    await h.start();
    await h.startJob('Document the CLI');
    expect(await used()).toBe(1);

    h.slack.failNext('chat.postMessage', { error: 'not_in_channel' });
    const asked = await h.command('Document the SDK');
    await h.slack.waitForResponse((r) => r.id === asked.responseUrl.split('/').pop());
    await eventually(async () => (await used()) === 1 || undefined, 'the slot given back');
    expect(h.api.requestsTo('create')).toHaveLength(1);
    expect(h.logs).toContain('job.root_post_failed');
  });
});

describe.skipIf(!postgresAvailable)('two replicas racing for the last slot', () => {
  it('give it to one start: one root, one private refusal', { timeout: 60_000 }, async () => {
    h = await Harness.create({ engine: 'postgres' });
    await h.start();
    const { eventsUrl } = await h.startReplica();
    await spend(99);
    await Promise.all([
      h.command('Last slot, first replica', { user: 'U0001' }),
      h.command('Last slot, second replica', { user: 'U0002', url: eventsUrl }),
    ]);
    await eventually(() => refusals().length === 1 || undefined, 'the refusal', 15_000);
    await eventually(() => h.api.createdJobs().length === 1 || undefined, 'the job', 15_000);
    await sleep(500); // room for a second root
    expect(h.roots()).toHaveLength(1);
    expect(h.api.requestsTo('create')).toHaveLength(1);
    expect(await used()).toBe(100);
  });
});
