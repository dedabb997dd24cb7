import { afterEach, beforeEach, describe, expect, it, onTestFailed } from 'vitest';
import type { StoredMessage } from '../fakes/slack.ts';
import { CHANNEL, Harness, USER } from '../helpers/harness.ts';
import { eventually } from '../helpers/net.ts';

/**
 * The buttons on a job's root message and its status reaction, driving the real Bolt app
 * with signed interaction payloads (and Socket Mode envelopes) against the fakes.
 */
let h: Harness;
afterEach(async (ctx) => {
  // What each scenario looks like in Slack, when asked (SLACK_VIEW_DUMP=1): render the
  // files with slack-view's render.mjs. A plain test run writes nothing into the checkout.
  if (process.env.SLACK_VIEW_DUMP) {
    const slug = ctx.task.name.replace(/[^a-z0-9]+/gi, '-').slice(0, 60);
    await h.slack.dump(`slack-view-out/buttons/${slug}.json`);
  }
  if (ctx.task.result?.state === 'fail') {
    const quiet = /"msg":"(poll\.|api\.response|loop\.)/;
    console.error(
      h.logs
        .split('\n')
        .filter((l) => !quiet.test(l))
        .slice(-60)
        .join('\n'),
    );
    console.error(JSON.stringify(h.roots().map((m) => [m.text, m.reactions])));
  }
  await h.close();
});

const OTHER = 'U0002';
const root = (ts: string) => h.slack.history(CHANNEL).find((m) => m.ts === ts) as StoredMessage;
const buttons = (m: StoredMessage) =>
  (m.blocks ?? [])
    .map((b) => b as { type?: string; elements?: { action_id?: string; url?: string }[] })
    .filter((b) => b.type === 'actions')
    .flatMap((b) => b.elements ?? []);
const actionIds = (ts: string) => buttons(root(ts)).map((b) => b.action_id);
const reactions = (ts: string) => root(ts).reactions.map((r) => r.name);
const shows = (ts: string, text: string) => root(ts).text.startsWith(text);
const logged = (event: string) => h.logLines().filter((l) => l.msg === event);
const answers = (responseId: string) =>
  h.slack.responses
    .filter((r) => r.id === responseId)
    .map((r) => (r.body as { text?: string }).text);

/** Runs /agent; waits for the root, and for its first edit to show `status`. */
async function start(status: string, prompt = 'Add a quickstart for the Python SDK') {
  const n = h.roots().length;
  expect((await h.command(prompt)).status).toBe(200);
  const r = await eventually(() => h.roots()[n], 'root message');
  await eventually(() => shows(r.ts, status), `root showing ${status}`);
  return r;
}

async function working() {
  const r = await start('Working');
  const job = h.api.createdJobs().at(-1);
  if (!job) throw new Error('no job');
  return { root: r, job };
}

describe('Retry', () => {
  beforeEach(async () => {
    h = await Harness.create({ mode: 'http' });
    await h.start();
  });

  it('starts one job for two clicks at once, from two people on two replicas', async () => {
    const replicaLog: string[] = [];
    const replica = await h.startReplica(replicaLog);
    onTestFailed(() => {
      console.error(
        'replica:',
        replicaLog
          .join('')
          .split('\n')
          .filter((l) => !l.includes('poll'))
          .slice(-30)
          .join('\n'),
      );
      console.error('responses:', JSON.stringify(h.slack.responses));
    });
    h.api.inject('create', { status: 429, retryAfterSec: 600 });
    const r = await start('Could not start');
    expect(actionIds(r.ts)).toEqual(['job_retry']);
    await eventually(() => reactions(r.ts).join() === 'x', 'x on the root');
    const clicks = await Promise.all([
      h.click(r.ts, 'job_retry'),
      h.click(r.ts, 'job_retry', { user: OTHER, url: replica.eventsUrl }),
    ]);
    expect(clicks.map((c) => c.status)).toEqual([200, 200]);
    await eventually(() => shows(r.ts, 'Working'), 'the same root working');
    // Exactly one of the clicks was told it came second; one job was created.
    await eventually(
      () => clicks.some((c) => answers(c.responseId).some((t) => t?.includes('retried already'))),
      'the second click answered',
    );
    expect(h.api.requestsTo('create')).toHaveLength(2); // the failed one, and one retry
    expect(h.api.createdJobs()).toHaveLength(1);
    expect(h.roots()).toHaveLength(1);
    const store = await h.openStore();
    expect(await store.findThread('T0001', CHANNEL, r.ts)).toMatchObject({
      status: 'active',
      jobId: h.api.createdJobs()[0]?.id,
    });
    await store.close();
    await eventually(() => reactions(r.ts).join() === 'hourglass_flowing_sand', 'the reaction');
    expect(actionIds(r.ts)).toEqual(['job_follow_up', 'job_unwatch']);
    // Who clicked is logged (by whichever replica took it); anyone may retry.
    expect(h.logs).toMatch(/"msg":"action.clicked"/);
  });

  it('asks before retrying a start that may have gone through, and retries the same thread', async () => {
    h.api.inject('create', { status: 503 });
    const r = await start('Could not start');
    const retry = buttons(root(r.ts)).find((b) => b.action_id === 'job_retry') as {
      confirm?: unknown;
    };
    expect(JSON.stringify(retry.confirm)).toContain('Check your pull requests');
    await h.click(r.ts, 'job_retry', { user: OTHER });
    await eventually(() => shows(r.ts, 'Working'), 'working after the retry');
    const claimed = logged('job.retry_claimed')[0];
    expect(claimed).toMatchObject({ by: OTHER, requester: USER });
    // The button is spent: a stale click later is told so, and starts nothing.
    expect(actionIds(r.ts)).not.toContain('job_retry');
  });

  it('tells the clicker when the budget is still spent, and starts nothing', async () => {
    h.api.inject('create', { status: 429, retryAfterSec: 600 });
    const r = await start('Could not start');
    const store = await h.openStore();
    const hour = 3_600_000;
    while ((await store.takeBudgetSlot('agent:proj_docs', Date.now(), hour, 100)).ok);
    await store.close();
    const click = await h.click(r.ts, 'job_retry', { user: OTHER });
    const answer = await eventually(() => answers(click.responseId)[0], 'the answer');
    expect(answer).toMatch(
      /budget .* is used up, so I did not retry. The next slot opens at \d\d:\d\d UTC/,
    );
    expect(h.api.requestsTo('create')).toHaveLength(1);
    expect(actionIds(r.ts)).toEqual(['job_retry']); // still there for later
  });

  it('offers no retry when a retry cannot help (a rejected prompt, a bad key)', async () => {
    h.api.inject('create', { status: 400, details: ['prompt too long'] });
    const a = await start('Could not start', 'first');
    h.api.inject('create', { status: 401 });
    const b = await start('Could not start', 'second');
    for (const r of [a, b]) {
      expect(actionIds(r.ts)).toEqual([]);
      await expect(h.click(r.ts, 'job_retry')).rejects.toThrow(/no button/);
    }
  });

  it('answers a malformed, stale or unknown click plainly, and keeps running', async () => {
    h.api.inject('create', { status: 429, retryAfterSec: 600 });
    const r = await start('Could not start');
    const click = await h.click(r.ts, 'job_retry');
    await eventually(() => shows(r.ts, 'Working'), 'working');
    // The Retry button of an old copy of the message, clicked again: nothing new starts.
    const store = await h.openStore();
    const threadId = (await store.findThread('T0001', CHANNEL, r.ts))?.id;
    await store.close();
    const payload = (value: string, responseId: string) => ({
      type: 'block_actions',
      // Slack always names the workspace: the job a button names must be of it.
      team: { id: 'T0001' },
      user: { id: USER },
      channel: { id: CHANNEL },
      trigger_id: h.slack.issueTriggerId(USER),
      response_url: h.slack.responseUrl(responseId),
      actions: [{ action_id: 'job_retry', value, type: 'button' }],
    });
    expect((await h.interact(payload(String(threadId), 'old-1'))).status).toBe(200);
    await eventually(() => answers('old-1')[0]?.includes('retried already'), 'stale answer');
    const stale = await h.interact(payload('99999', 'stale-1'));
    expect(stale.status).toBe(200);
    await eventually(() => answers('stale-1')[0]?.includes("can't find the job"), 'unknown answer');
    const bad = await h.interact(payload('not-a-number', 'bad-1'));
    expect(bad.status).toBe(200);
    await eventually(() => answers('bad-1')[0]?.includes('out of date'), 'malformed answer');
    expect(logged('action.malformed')).toHaveLength(1);
    expect(click.status).toBe(200);
    expect(h.api.createdJobs()).toHaveLength(1);
  });
});

describe('View pull request, Send follow-up, Cancel watching, status reactions', () => {
  beforeEach(async () => {
    h = await Harness.create({ mode: 'http' });
    await h.start();
  });

  it('shows the PR as a link button and follows the job with the root reaction', async () => {
    const { root: r, job } = await working();
    await eventually(() => reactions(r.ts).join() === 'hourglass_flowing_sand', 'hourglass');
    h.api.complete(job.id, 'https://github.com/acme/docs/pull/42');
    await eventually(() => shows(r.ts, 'Completed'), 'completed root');
    await eventually(() => reactions(r.ts).join() === 'white_check_mark', 'check mark');
    const link = buttons(root(r.ts)).find((b) => b.action_id === 'job_view_pr');
    expect(link?.url).toBe('https://github.com/acme/docs/pull/42');
    // The link's click is acked (Slack sends it too), and nothing else happens.
    expect((await h.click(r.ts, 'job_view_pr')).status).toBe(200);
    expect(actionIds(r.ts)).toEqual(['job_view_pr', 'job_follow_up']);
    expect(h.slack.callsTo('reactions.remove').map((c) => c.args.name)).toEqual([
      'hourglass_flowing_sand',
    ]);

    const failed = await working();
    h.api.fail(failed.job.id);
    await eventually(() => reactions(failed.root.ts).join() === 'x', 'x on a failed job');
  });

  it('sends a follow-up written in the form, once, and refuses an empty one', async () => {
    const { root: r, job } = await working();
    const click = await h.click(r.ts, 'job_follow_up');
    expect(click.status).toBe(200);
    const opened = await eventually(() => h.slack.views[0], 'views.open');
    expect(opened.user).toBe(USER);
    const view = opened.view;
    expect(JSON.parse(String(view.private_metadata))).toEqual({ threadId: expect.any(Number) });

    const empty = await h.submitView(view, { follow_up: { text: '   ' } });
    expect(empty.body).toMatchObject({
      response_action: 'errors',
      errors: { follow_up: expect.stringContaining('Write what the agent') },
    });
    expect(h.api.requestsTo('message')).toHaveLength(0);

    const sent = await h.submitView(view, { follow_up: { text: 'Also cover <async> & sync' } });
    expect(sent.status).toBe(200);
    expect(sent.body?.response_action).toBeUndefined();
    const msg = await eventually(() => h.api.requestsTo('message')[0], 'the follow-up');
    expect(msg.body).toEqual({ prompt: 'Also cover <async> & sync' });
    expect(msg.path).toContain(job.id);
    // The same submission again (Slack retried it): sent once.
    await h.submitView(view, { follow_up: { text: 'Also cover <async> & sync' } });
    const told = await eventually(
      () => h.slack.ephemerals.find((e) => e.text?.includes('I sent your follow-up')),
      'the acknowledgement',
    );
    expect(told).toMatchObject({ user: USER, thread_ts: r.ts });
    expect(told.text).toContain('&lt;async&gt; &amp; sync');
    expect(h.api.requestsTo('message')).toHaveLength(1);
  });

  it('tells the person when the click is too old to open the form', async () => {
    const { root: r } = await working();
    const click = await h.click(r.ts, 'job_follow_up', { triggerIssuedAt: Date.now() - 10_000 });
    await eventually(
      () => answers(click.responseId)[0]?.includes("couldn't open the form"),
      'answer',
    );
    expect(h.slack.callsTo('views.open')[0]?.response).toMatchObject({
      error: 'expired_trigger_id',
    });
  });

  it('stops polling when the requester cancels watching, refuses anyone else, and resumes on a follow-up', async () => {
    const { root: r, job } = await working();
    const other = await h.click(r.ts, 'job_unwatch', { user: OTHER });
    await eventually(
      () => answers(other.responseId)[0]?.includes('Only <@U0001>, who asked for this job'),
      'the refusal',
    );
    expect(actionIds(r.ts)).toContain('job_unwatch');

    await h.click(r.ts, 'job_unwatch');
    // The root's status line itself says so: no "Working" left beside a separate note.
    await eventually(
      () => JSON.stringify(root(r.ts).blocks).includes(':no_bell: *Not watched*'),
      'the root saying so',
    );
    expect(JSON.stringify(root(r.ts).blocks)).toContain('Cancelled by <@U0001>');
    expect(JSON.stringify(root(r.ts).blocks)).not.toContain('Working');
    expect(root(r.ts).text).toMatch(/^Not watched: /);
    await eventually(() => reactions(r.ts).join() === 'no_bell', 'no bell');
    expect(actionIds(r.ts)).toEqual(['job_follow_up']);
    const getsOf = (id: string) => h.api.requestsTo('get').filter((g) => g.path.includes(id));
    const before = getsOf(job.id).length;
    // Another job polled three times since proves the poller ran on meanwhile.
    const second = await working();
    const mark = getsOf(second.job.id).length;
    await eventually(() => getsOf(second.job.id).length >= mark + 3, 'the poller running on');
    h.api.complete(job.id, 'https://github.com/acme/docs/pull/7');
    const mark2 = getsOf(second.job.id).length;
    await eventually(() => getsOf(second.job.id).length >= mark2 + 3, 'the poller running on');
    expect(getsOf(job.id).length).toBe(before);
    expect(h.botReplies(r.ts)).toHaveLength(0);

    // A reply gives the job new work: it is watched again and its outcome announced.
    await h.reply(r.ts, 'Please also add a Go example');
    await eventually(() => h.api.requestsTo('message').length === 1, 'the follow-up');
    h.api.complete(job.id, 'https://github.com/acme/docs/pull/8');
    await eventually(() => h.botReplies(r.ts).length === 1, 'the announcement', 8_000);
    expect(h.botReplies(r.ts)[0]?.text).toContain('pull/8');
  });
});

describe('over Socket Mode', () => {
  beforeEach(async () => {
    h = await Harness.create({ mode: 'socket' });
    await h.start();
  });

  it('opens the form and takes a submission through interactive envelopes', async () => {
    const { root: r } = await working();
    await h.click(r.ts, 'job_follow_up');
    const { view } = await eventually(() => h.slack.views[0], 'views.open');
    const empty = await h.submitView(view, { follow_up: { text: '' } });
    expect(empty.body).toMatchObject({ response_action: 'errors' });
    await h.submitView(view, { follow_up: { text: 'Add a table of contents' } });
    const msg = await eventually(() => h.api.requestsTo('message')[0], 'the follow-up');
    expect(msg.body).toEqual({ prompt: 'Add a table of contents' });
  });
});
