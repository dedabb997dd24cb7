/**
 * Renders the bot's surfaces as a person sees them: runs five scenarios with the real bot
 * against the fakes (test/helpers/harness.ts), dumps each fake Slack's calls, and draws them
 * with ../shared/tools/slack-view at desktop (1000 px) and phone (400 px) width.
 *
 *   node scripts/screens.ts after            # docs/screens/after-<surface>-<width>.png
 *   node scripts/screens.ts before agent     # one surface only
 *
 * Surfaces: agent (an /agent job that opens a PR), unwatch (Cancel watching), visitors,
 * digest (the weekly digest, caught up at start), insights (`/insights`, a gap drafted into
 * a job that opens a PR, `/insights` again, a gap's evidence), home (the App Home after the
 * above).
 * Needs Chromium at /usr/bin/chromium (shot.sh). The JSON and HTML stay in slack-view-out/.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { DIGEST, missedAnHourAgo } from '../test/helpers/digest.ts';
import { CHANNEL, Harness, USER } from '../test/helpers/harness.ts';
import { eventually } from '../test/helpers/net.ts';
import { listedGaps } from '../test/helpers/reports.ts';
import { eventCallback } from '../test/helpers/slack-requests.ts';

const VIEW = '../shared/tools/slack-view';
const OUT = 'slack-view-out';
const SHOTS = 'docs/screens';
const WIDTHS = [1000, 400];

const [label = 'after', only] = process.argv.slice(2);

type Scenario = () => Promise<{ h: Harness; channel: string }>;

async function started(h: Harness): Promise<Harness> {
  await h.start();
  return h;
}

const jobDone = (h: Harness, rootTs: string) =>
  eventually(() => h.botReplies(rootTs).length > 0, 'completion reply', 10_000);

const scenarios: Record<string, Scenario> = {
  async agent() {
    const h = await started(await Harness.create());
    const { root, job } = await h.startJob('Add a quickstart for the Python SDK');
    h.api.complete(job.id, 'https://github.com/acme/docs/pull/42');
    await jobDone(h, root.ts);
    await settle(h);
    return { h, channel: CHANNEL };
  },

  async unwatch() {
    const h = await started(await Harness.create());
    const { root } = await h.startJob('Document the webhooks');
    const edits = h.slack.callsTo('chat.update').length;
    await h.click(root.ts, 'job_unwatch');
    await eventually(() => h.slack.callsTo('chat.update').length > edits, 'root edit');
    await settle(h);
    return { h, channel: CHANNEL };
  },

  async visitors() {
    const h = await Harness.create();
    h.api.setSite({ paths: 40 });
    await h.start();
    await h.command('2026-11-01 2026-11-07', { command: '/visitors' });
    await eventually(
      () => h.logLines().some((l) => l.msg === 'visitors.posted'),
      'report posted',
      15_000,
    );
    await settle(h);
    return { h, channel: CHANNEL };
  },

  async digest() {
    const { h } = await missedAnHourAgo();
    h.api.setSite({ paths: 40 });
    await h.start();
    await eventually(
      () => h.logLines().some((l) => l.msg === 'digest.posted'),
      'digest posted',
      20_000,
    );
    await settle(h);
    return { h, channel: DIGEST };
  },

  async insights() {
    const h = await started(
      await Harness.create({ env: { DOCS_BASE_URL: 'https://docs.acme.com' } }),
    );
    const report = await insightsRun(h, 1);
    const msg = h.slack.history(CHANNEL).find((m) => m.ts === report);
    await h.choose(report, `draft:${listedGaps(msg)[0]!.id}`);
    const { view } = await eventually(() => h.slack.views[0], 'views.open');
    await h.submitView(view, { draft: { prompt: 'Add a page on rotating API keys' } });
    const job = await eventually(() => h.api.createdJobs()[0], 'the job');
    h.api.complete(job.id, 'https://github.com/acme/docs/pull/42');
    await settle(h, 3_000);
    const later = await insightsRun(h, 2);
    // The details of a gap, answered to the person alone.
    const shown = h.slack.history(CHANNEL).find((m) => m.ts === later);
    const click = await h.choose(later, `evidence:${listedGaps(shown)[0]!.id}`);
    const answer = await eventually(
      () => h.slack.responses.find((r) => r.id === click.responseId),
      'the evidence',
    );
    // Where slack-view draws it: as the person saw it, in the channel.
    Object.assign(answer, { channel: CHANNEL, user: USER });
    await settle(h);
    return { h, channel: CHANNEL };
  },

  async home() {
    const h = await started(await Harness.create());
    const done = await h.startJob('Add a quickstart for the Python SDK');
    h.api.complete(done.job.id, 'https://github.com/acme/docs/pull/42');
    await jobDone(h, done.root.ts);
    const unwatched = await h.startJob('Document the webhooks');
    await h.click(unwatched.root.ts, 'job_unwatch');
    await h.startJob('Explain rate limits');
    await settle(h, 3_000);
    const before = h.slack.callsTo('views.publish').length;
    await h.deliverEvent(
      eventCallback({ type: 'app_home_opened', user: USER, channel: 'D0001', tab: 'home' }),
    );
    await eventually(() => h.slack.callsTo('views.publish').length > before, 'publish', 8_000);
    await settle(h);
    return { h, channel: 'none' }; // the Home panel alone
  },
};

/** Runs `/insights 14d` and waits for its `n`th report; returns the report's ts. */
async function insightsRun(h: Harness, n: number): Promise<string> {
  await h.command('14d', { command: '/insights' });
  const reports = () =>
    h.slack.history(CHANNEL).filter((m) => m.metadata?.event_type === 'docs_insights_report');
  return (await eventually(() => reports()[n - 1], 'insights report', 15_000)).ts;
}

/** Lets the notifier and the Home finish what they were doing. */
const settle = (_h: Harness, ms = 1_500) => new Promise((r) => setTimeout(r, ms));

mkdirSync(SHOTS, { recursive: true });
for (const [surface, run] of Object.entries(scenarios)) {
  if (only && only !== surface) continue;
  const { h, channel } = await run();
  const json = join(OUT, `${label}-${surface}.json`);
  const html = join(OUT, `${label}-${surface}.html`);
  try {
    await h.slack.dump(json);
    const publishes = h.slack.callsTo('views.publish').length;
    process.stdout.write(`${surface}: ${h.slack.calls.length} calls, ${publishes} views.publish\n`);
  } finally {
    await h.close();
  }
  execFileSync(process.execPath, [
    `${VIEW}/render.mjs`,
    json,
    html,
    '--channel',
    channel,
    '--title',
    `${label}: ${surface}`,
  ]);
  for (const width of WIDTHS) {
    const png = join(SHOTS, `${label}-${surface}-${width}.png`);
    execFileSync('bash', [`${VIEW}/shot.sh`, html, png, String(width), '6000'], {
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    process.stdout.write(`  ${png}\n`);
  }
}
