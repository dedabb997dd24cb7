import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CHANNEL, Harness, PROJECT, SECRETS, USER } from '../helpers/harness.ts';
import { eventually } from '../helpers/net.ts';
import { eventCallback } from '../helpers/slack-requests.ts';

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
    // Checked first with one cheap read, with the project's own key.
    expect(h.api.requestsTo('jobs')).toEqual([
      expect.objectContaining({
        path: `/v1/agent/${OTHER}/jobs`,
        query: { take: '1' },
        authorization: `Bearer ${OTHER_KEY}`,
        status: 200,
      }),
    ]);
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
    // Only the admin's binding read the project; the refused ones and the resets read nothing.
    expect(h.api.requests.map((r) => [r.kind, r.path])).toEqual([
      ['jobs', `/v1/agent/${OTHER}/jobs`],
    ]);
    expect(h.slack.callsTo('chat.postMessage')).toHaveLength(0);
    expect(h.logs).toContain('command.project_change');
  });

  it('refuses a project the agent API does not know, and leaves the channel as it was', async () => {
    const answer = await ask('project proj_typo', { user: ADMIN });
    expect(answer).toContain('The agent API does not know project `proj_typo`');
    expect(answer).toContain(`this channel stays on \`${PROJECT}\``);
    expect(h.api.requestsTo('jobs')).toEqual([
      expect.objectContaining({ path: '/v1/agent/proj_typo/jobs', status: 404 }),
    ]);
    expect(await ask('project')).toContain(`uses the default project \`${PROJECT}\``);
    const store = await h.openStore();
    expect(await store.channelProject('T0001', CHANNEL)).toBeUndefined();
    await store.close();
    // The next job goes to the project the channel still uses, not to the typo.
    await h.command('Add a handbook page');
    await eventually(() => h.api.requestsTo('create').length === 1, 'the job');
    expect(h.api.requestsTo('create')[0]?.path).toBe(`/v2/agent/${PROJECT}/job`);
    expect(h.logLines().filter((l) => l.msg === 'command.project_change')).toEqual([
      expect.objectContaining({ changed: false, refused: 'unknown_project' }),
    ]);
  });

  it('says an API error during the check is one, not an unknown project, and binds nothing', async () => {
    await ask(`project ${OTHER}`, { user: ADMIN });
    h.api.inject('jobs', { status: 503 }, 2);
    const answer = await ask('project proj_blog', { user: ADMIN });
    expect(answer).toContain(
      "I couldn't check project `proj_blog` with the agent API (The Mintlify API answered 503)",
    );
    expect(answer).toContain(`this channel stays on \`${OTHER}\``);
    expect(answer).not.toContain('does not know');
    expect(await ask('project')).toContain(`uses project \`${OTHER}\``);
    expect(h.logLines().some((l) => l.msg === 'project.check_failed')).toBe(true);
    // Once the API answers again, the same binding goes through.
    expect(await ask('project proj_blog', { user: ADMIN })).toContain(
      'This channel now uses project `proj_blog`',
    );
  });

  it("shows on the App Home the budgets of the projects the person's jobs use", async () => {
    await ask('project proj_blog', { user: ADMIN });
    const store = await h.openStore();
    for (let i = 0; i < 5; i++)
      await store.takeBudgetSlot('agent:proj_blog', Date.now(), 3_600_000, 100);
    await store.close();
    await h.startJob('Blog post about the release');
    await h.command('Fix a typo', { channel: DOCS_CHANNEL });
    await eventually(() => h.api.requestsTo('create').length === 2, 'the second job');
    const home = async (user: string) => {
      await h.deliverEvent(
        eventCallback({ type: 'app_home_opened', user, channel: 'D0001', tab: 'home' }),
      );
      return eventually(() => {
        const view = JSON.stringify(h.slack.homeViews.get(user) ?? null);
        return (
          view.includes('Agent budget') && view.includes('Fix a typo') === (user === USER) && view
        );
      }, `${user}'s Home`);
    };
    // Newest job's project first: the default one (the typo fix), then the bound one.
    const mine = await home(USER);
    expect(mine).toMatch(
      new RegExp(
        `Agent budget of \`${PROJECT}\`:\\* [▰▱]+ 99 of 100 uses left.*\\\\n\\*Agent budget of \`proj_blog\`:\\* [▰▱]+ 94 of 100 uses left`,
      ),
    );
    // Someone without jobs sees the configured project's budget.
    const theirs = await home('U0003');
    expect(theirs).toContain(`Agent budget of \`${PROJECT}\`:* ▰▰▰▰▰▰▰▰▰▱ 99 of 100 uses left`);
    expect(theirs).not.toContain('proj_blog');
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
