import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CHANNEL, Harness, PROJECT, SECRETS, USER } from '../helpers/harness.ts';
import { eventually } from '../helpers/net.ts';

const ADMIN = 'UADMIN01';
const OTHER = 'proj_handbook';
const OTHER_KEY = 'mint_handbook_key_00000000001';
const DOCS_CHANNEL = 'C0DOCS1';

let h: Harness;
beforeEach(async () => {
  h = await Harness.create({
    env: { ADMIN_USERS: ADMIN, MINTLIFY_PROJECT_KEYS: `${OTHER}=${OTHER_KEY}` },
  });
  h.api.addProject(OTHER, OTHER_KEY);
  h.api.addProject('proj_blog');
  await h.start();
});
afterEach(async () => {
  await h.close();
});

/** Runs `/agent <text>` and waits for the ephemeral answer it gets through response_url. */
async function ask(text: string, o: { user?: string; channel?: string } = {}) {
  const asked = await h.command(text, o);
  expect(asked.body).toBeNull();
  const answer = await h.slack.waitForResponse((r) => r.id === asked.responseUrl.split('/').pop());
  expect(answer.body).toMatchObject({ response_type: 'ephemeral' });
  return (answer.body as { text: string }).text;
}

describe('/agent project', () => {
  it('shows the default, lets an admin bind the channel, and sends its jobs, polls and follow-ups there', async () => {
    expect(await ask('project')).toContain(
      `This channel uses the default project \`${PROJECT}\` (with the organisation's admin key)`,
    );
    expect(await ask(`project ${OTHER}`, { user: ADMIN })).toContain(
      `This channel now uses project \`${OTHER}\` (with its own API key)`,
    );
    expect(await ask('project')).toMatch(
      new RegExp(
        `uses project \`${OTHER}\` \\(with its own API key\\), set by <@${ADMIN}> on <!date\\^\\d+\\^\\{date_short\\}\\|\\d{4}-\\d\\d-\\d\\d>`,
      ),
    );

    await h.command('Add a handbook page');
    const [job] = await eventually(
      () => h.api.createdJobs().length === 1 && h.api.createdJobs(),
      'the job',
    );
    expect(h.api.projectOf(job!.id)).toBe(OTHER);
    const [create] = h.api.requestsTo('create');
    expect(create?.path).toBe(`/v2/agent/${OTHER}/job`);
    expect(create?.authorization).toBe(`Bearer ${OTHER_KEY}`);
    const root = await eventually(() => h.roots()[0], 'the root');
    await eventually(() => h.api.requestsTo('get').length > 0, 'a poll');
    for (const get of h.api.requestsTo('get')) {
      expect(get.path).toBe(`/v2/agent/${OTHER}/job/${job!.id}`);
      expect(get.status).toBe(200);
    }
    await h.reply(root.ts, 'Also a FAQ');
    const [message] = await eventually(
      () => h.api.requestsTo('message').length === 1 && h.api.requestsTo('message'),
      'the follow-up',
    );
    expect(message?.path).toBe(`/v2/agent/${OTHER}/job/${job!.id}/message`);
    expect(message?.status).toBe(200);

    // Another channel still uses the default project, with the admin key.
    await h.command('Fix a typo', { channel: DOCS_CHANNEL });
    await eventually(() => h.api.requestsTo('create').length === 2, 'the second job');
    const second = h.api.requestsTo('create')[1];
    expect(second?.path).toBe(`/v2/agent/${PROJECT}/job`);
    expect(second?.authorization).toBe(`Bearer ${SECRETS.apiKey}`);
    expect(h.logs).not.toContain(OTHER_KEY);
  });

  it('keeps each project budget apart: a spent default budget does not stop a bound channel', async () => {
    await ask('project proj_blog', { user: ADMIN });
    const store = await h.openStore();
    for (let i = 0; i < 100; i++)
      await store.takeBudgetSlot(`agent:${PROJECT}`, Date.now(), 3_600_000, 100);
    await store.close();
    expect(await ask('status')).toContain('100 of 100 uses left');
    await h.command('Blog post about the release');
    await eventually(() => h.api.requestsTo('create').length === 1, 'the job in proj_blog');
    expect(h.api.requestsTo('create')[0]?.path).toBe('/v2/agent/proj_blog/job');
    // proj_blog has no key of its own: the organisation's admin key is used.
    expect(h.api.requestsTo('create')[0]?.authorization).toBe(`Bearer ${SECRETS.apiKey}`);
    const spent = await ask('Another one', { channel: DOCS_CHANNEL });
    expect(spent).toContain('is used up');
    expect(h.api.requestsTo('create')).toHaveLength(1);
  });

  it('lets only admins change it, refuses a malformed id, and goes back to the default', async () => {
    expect(await ask(`project ${OTHER}`, { user: USER })).toContain(
      'Only the admins listed in `ADMIN_USERS`',
    );
    expect(await ask('project <!channel> x', { user: ADMIN })).toContain(
      '`&lt;!channel&gt; x` is not a project id',
    );
    expect(await ask('project')).toContain('default project');
    await ask(`project ${OTHER}`, { user: ADMIN });
    expect(await ask('project default', { user: ADMIN })).toContain(
      `back on the default project \`${PROJECT}\``,
    );
    expect(await ask('project reset', { user: ADMIN })).toContain('already uses the default');
    expect(h.api.requests).toHaveLength(0);
    expect(h.slack.callsTo('chat.postMessage')).toHaveLength(0);
    expect(h.logs).toContain('command.project_change');
  });

  it("makes /agent doctor check the channel's own project, with its own key", async () => {
    await ask(`project ${OTHER}`, { user: ADMIN });
    const answer = await ask('doctor', { user: ADMIN });
    expect(answer).toContain(`project ${OTHER}: accepted`);
    const [check] = h.api.requestsTo('visitors');
    expect(check?.path).toBe(`/v1/analytics/${OTHER}/visitors`);
    expect(check?.authorization).toBe(`Bearer ${OTHER_KEY}`);
    expect(answer).not.toContain(OTHER_KEY);
  });

  it('makes /visitors in a bound channel report on its project', async () => {
    await ask('project proj_blog', { user: ADMIN });
    await h.command('7d', { command: '/visitors' });
    await eventually(
      () => h.slack.history(CHANNEL).some((m) => m.files?.length),
      'the report',
      10_000,
    );
    const paths = new Set(h.api.requestsTo('visitors').map((r) => r.path));
    expect([...paths]).toEqual(['/v1/analytics/proj_blog/visitors']);
  });
});

it('tells that no admin is configured when ADMIN_USERS is unset', async () => {
  const solo = await Harness.create();
  try {
    await solo.start();
    const asked = await solo.command('project proj_x', { user: USER });
    const answer = await solo.slack.waitForResponse(
      (r) => r.id === asked.responseUrl.split('/').pop(),
    );
    expect((answer.body as { text: string }).text).toContain(
      'none are configured: set `ADMIN_USERS`',
    );
  } finally {
    await solo.close();
  }
});
