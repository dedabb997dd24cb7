import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CHANNEL, Harness, USER } from '../helpers/harness.ts';
import { eventually, sleep } from '../helpers/net.ts';
import { eventCallback } from '../helpers/slack-requests.ts';

let h: Harness;
beforeEach(async () => {
  h = await Harness.create({ mode: 'http' });
  await h.start();
});
afterEach(async (ctx) => {
  if (ctx.task.result?.state === 'fail') console.error(h.logs.split('\n').slice(-40).join('\n'));
  await h.close();
});

const startJob = (prompt: string, user = USER) => h.startJob(prompt, { user });

const publishes = (user = USER) =>
  h.slack.callsTo('views.publish').filter((c) => c.args.user_id === user && c.status === 200);
const homeOf = (user = USER) => JSON.stringify(h.slack.homeViews.get(user) ?? null);

async function openHome(user = USER) {
  const before = publishes(user).length;
  const res = await h.deliverEvent(
    eventCallback({ type: 'app_home_opened', user, channel: 'D0001', tab: 'home' }),
  );
  expect(res.status).toBe(200);
  await eventually(() => publishes(user).length > before, 'views.publish', 8_000);
  return homeOf(user);
}

describe('App Home', () => {
  it("shows the person's jobs with thread and PR links, the budget meter and the last report", async () => {
    const first = await startJob('Add a quickstart for <Python> & friends');
    const second = await startJob('Document the webhooks');
    await startJob('Someone else’s job', 'U0002');
    h.api.complete(first.job.id, 'https://github.com/acme/docs/pull/42');
    await eventually(() => h.botReplies(first.root.ts).length === 1, 'completion');
    await h.command('2026-11-01 2026-11-07', { command: '/visitors' });
    await eventually(
      () => h.logLines().some((l) => l.msg === 'visitors.posted'),
      'report posted',
      10_000,
    );

    const home = await openHome();
    const view = h.slack.homeViews.get(USER) as { type: string; blocks: unknown[] };
    expect(view.type).toBe('home');
    expect(view.blocks.length).toBeLessThanOrEqual(100);
    // Newest first, escaped, with the status and a permalink to each thread.
    expect(home.indexOf('Document the webhooks')).toBeLessThan(home.indexOf('Add a quickstart'));
    expect(home).toContain('Add a quickstart for &lt;Python&gt; &amp; friends');
    expect(home).toContain('Completed');
    expect(home).toContain('Working');
    expect(home).toContain('https://github.com/acme/docs/pull/42|View the pull request');
    for (const r of [first.root, second.root])
      expect(home).toContain(
        `https://acme.slack.com/archives/${CHANNEL}/p${r.ts.replace('.', '')}`,
      );
    expect(home).not.toContain('Someone else');
    // Three jobs started: 97 of the 100 agent uses are left.
    expect(home).toContain('97 of 100 uses left');
    expect(home).toContain('Last report:* Nov 1 – Nov 7, 2026 (UTC)');
    expect(home).toContain('▰▰▰▰▰▰▰▰▰▱');
    expect(home).toContain('unique visitors');
  });

  it('says honestly when there are no jobs and no report yet', async () => {
    const home = await openHome('U0003');
    expect(home).toContain('You have no jobs yet');
    expect(home).toContain('No traffic report yet');
    expect(home).toContain('100 of 100 uses left');
    expect(h.api.requests).toHaveLength(0);
  });

  it("is published again when one of the person's jobs changes", async () => {
    const { root, job } = await startJob('Add a changelog');
    const home = await openHome();
    expect(home).toContain('Working');
    const before = publishes().length;
    h.api.complete(job.id, 'https://github.com/acme/docs/pull/7');
    await eventually(() => h.botReplies(root.ts).length === 1, 'completion');
    await eventually(() => publishes().length > before, 'home republished', 8_000);
    await eventually(() => homeOf().includes('Completed'), 'home shows completion', 8_000);
    expect(homeOf()).toContain('https://github.com/acme/docs/pull/7');
  });

  it('follows Cancel watching: the job is listed as not watched, no longer as Working', async () => {
    const { root } = await startJob('Add a changelog');
    expect(await openHome()).toContain(':gear: Working');
    await h.click(root.ts, 'job_unwatch');
    await eventually(() => homeOf().includes(':no_bell: Not watched'), 'home follows', 8_000);
    expect(homeOf()).not.toContain('Working');
  });

  it('publishes only when what the person sees changes, coalesced, and always on opening', async () => {
    const { job } = await startJob('Add a changelog');
    // The job's root is edited (Starting, then Working): the Home follows with one publish
    // for the burst, then nothing while nothing the person sees changes.
    await eventually(() => publishes().length >= 1, 'the first publish', 8_000);
    await sleep(2_500);
    const settled = publishes().length;
    expect(settled).toBe(1);
    expect(homeOf()).toContain('Working');
    expect(publishes()).toHaveLength(settled);
    // Opening the tab publishes, changed or not.
    await openHome();
    expect(publishes()).toHaveLength(settled + 1);
    // A real change is published once.
    h.api.complete(job.id, 'https://github.com/acme/docs/pull/9');
    await eventually(() => homeOf().includes('Completed'), 'home shows completion', 8_000);
    await sleep(2_500);
    expect(publishes()).toHaveLength(settled + 2);
    const bodies = publishes().map((c) => JSON.stringify(c.args.view).replace(/Updated .*?"/, ''));
    expect(new Set(bodies).size).toBe(bodies.length - 1); // only the opening repeated a view
  });

  it('never lets a failing Home hold up a job announcement', async () => {
    h.slack.failNext('views.publish', { error: 'internal_error' }, 10);
    const { root, job } = await startJob('Add a glossary');
    h.api.complete(job.id, 'https://github.com/acme/docs/pull/8');
    await eventually(() => h.botReplies(root.ts).length === 1, 'completion announced');
    await h.deliverEvent(
      eventCallback({ type: 'app_home_opened', user: USER, channel: 'D0001', tab: 'home' }),
    );
    await eventually(
      () => h.logLines().some((l) => l.msg === 'home.publish_failed'),
      'the failure logged',
      8_000,
    );
    // The messages tab (not the Home) is ignored.
    const calls = h.slack.callsTo('views.publish').length;
    await h.deliverEvent(
      eventCallback({ type: 'app_home_opened', user: USER, channel: 'D0001', tab: 'messages' }),
    );
    await sleep(300);
    expect(h.slack.callsTo('views.publish').length).toBe(calls);
  });
});
