import { join } from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SINGLE_WORKSPACE as WS } from '../../src/store/scope.ts';
import { ROTATE_KEY_QUESTIONS, SSO_QUESTIONS } from '../fakes/analytics-insights-seed.ts';
import type { StoredMessage } from '../fakes/slack.ts';
import { cronAt, DIGEST, insightsSections } from '../helpers/digest.ts';
import { CHANNEL, Harness, USER } from '../helpers/harness.ts';
import { eventually, sleep } from '../helpers/net.ts';
import { gapId, listedGaps } from '../helpers/reports.ts';
import { slackLimitProblems } from '../helpers/slack-limits.ts';

/**
 * One need, one gap, across reports: the gap's state is kept (open, drafted, dismissed), so
 * two reports, two people and the digest all see the one job a gap has.
 */

let h: Harness;
beforeEach(async () => {
  h = await Harness.create({ env: { DOCS_BASE_URL: 'https://docs.acme.com' } });
  await h.start();
});
afterEach(async () => {
  await h.close();
});

const isReport = (m: StoredMessage) => m.metadata?.event_type === 'docs_insights_report';
const reports = (channel = CHANNEL) => h.slack.history(channel).filter(isReport);
const jobRoots = () => h.roots().filter((m) => !isReport(m));
const creates = () => h.api.requestsTo('create');
const isRotate = (text: string) => ROTATE_KEY_QUESTIONS.some((q) => text.includes(`“${q}”`));
const shown = (m: StoredMessage | undefined) =>
  JSON.stringify(m?.blocks, (k, v) => (k === 'value' ? undefined : v));
const PR = 'https://github.com/acme/docs/pull/7';

/** Runs `/insights 14d` and answers its report (the n-th in the channel). */
async function insights(n: number): Promise<StoredMessage> {
  await h.command('14d', { command: '/insights' });
  return eventually(() => reports()[n - 1], `report ${n}`, 10_000);
}

/** Drafts the rotate-key gap from `report` and lets its job open a pull request. */
async function draftRotate(report: StoredMessage): Promise<number> {
  const id = gapId(report, isRotate);
  const before = h.slack.views.length;
  await h.choose(report.ts, `draft:${id}`);
  const { view } = await eventually(() => h.slack.views[before], 'the form');
  await h.submitView(view, { draft: { prompt: 'Add a page on rotating API keys' } });
  const job = await eventually(() => h.api.createdJobs()[0], 'the job');
  h.api.complete(job.id, PR);
  await eventually(
    () => JSON.stringify(jobRoots()[0]?.blocks).includes('View pull request'),
    'the root shows the pull request',
  );
  return id;
}

describe('insight gaps', () => {
  it('knows a gap across two reports: two people drafting it at once, on two replicas, start one job; a third is told where it is', async () => {
    const replica = await h.startReplica();
    const first = await insights(1);
    const second = await insights(2);
    const id = gapId(first, isRotate);
    expect(gapId(second, isRotate)).toBe(id);
    expect(slackLimitProblems(first)).toEqual([]);
    await h.choose(first.ts, `draft:${id}`);
    await h.choose(second.ts, `draft:${id}`, { user: 'U0OTHER' });
    const [a, b] = await eventually(
      () => (h.slack.views.length === 2 ? h.slack.views : undefined),
      'two forms',
    );
    const [sentA, sentB] = await Promise.all([
      h.submitView(a!.view, { draft: { prompt: 'Cover key rotation' } }),
      h.submitView(
        b!.view,
        { draft: { prompt: 'Cover rotation again' } },
        { user: 'U0OTHER', url: replica.eventsUrl },
      ),
    ]);
    const refused = [sentA, sentB].filter((s) => s.body?.response_action === 'errors');
    expect(refused).toHaveLength(1);
    expect(JSON.stringify(refused[0]?.body)).toContain('This gap was drafted already');
    await eventually(() => creates()[0], 'the create');
    const root = await eventually(() => jobRoots()[0], 'the root');
    await sleep(500);
    expect(creates()).toHaveLength(1);
    // Later, from either report, Draft it opens no form: it says where the job is.
    const click = await h.choose(second.ts, `draft:${id}`, { user: 'U0THIRD' });
    const answer = await eventually(
      () => h.slack.responses.find((r) => r.id === click.responseId),
      'the answer',
    );
    const permalink = `https://acme.slack.com/archives/${CHANNEL}/p${root.ts.replace('.', '')}`;
    expect(JSON.stringify(answer.body)).toContain(`<${permalink}|its thread>`);
    expect(JSON.stringify(answer.body)).toContain('Nothing new was started');
    expect(h.slack.views).toHaveLength(2);
    expect(creates()).toHaveLength(1);
    expect(h.logs).toContain('insight_gap.already_drafted');
  });

  it('shows a drafted gap as drafted, with its thread and pull request, in a later report and the digest', async () => {
    const id = await draftRotate(await insights(1));
    const root = jobRoots()[0]!;
    const permalink = `https://acme.slack.com/archives/${CHANNEL}/p${root.ts.replace('.', '')}`;
    const later = await insights(2);
    expect(listedGaps(later).map((g) => g.id)).not.toContain(id);
    const text = shown(later);
    expect(text).toContain('Drafted with the agent');
    expect(text).toContain(`<${permalink}|job thread>`);
    expect(text).toContain(`<${PR}|pull request acme/docs#7>`);
    expect(text).toContain(`Drafted by <@${USER}>`);
    expect(slackLimitProblems(later)).toEqual([]);

    // The weekly digest, in another channel, knows it too.
    await h.stopBot();
    Object.assign(h.env, {
      DIGEST_CHANNEL: DIGEST,
      DIGEST_CRON: cronAt(new Date(Date.now() - 3_600_000)),
    });
    await h.start();
    const [section] = await eventually(
      () => (insightsSections(h).length ? insightsSections(h) : undefined),
      'the digest section',
      10_000,
    );
    expect(listedGaps(section).map((g) => g.id)).not.toContain(id);
    expect(shown(section)).toContain(`<${permalink}|job thread>`);
    expect(shown(section)).toContain(`<${PR}|pull request acme/docs#7>`);
    // Its PR is newer than the digest's week: the section says when to look again.
    expect(shown(section)).toContain('after this period: the next report says how it went');
    expect(creates()).toHaveLength(1);
  });

  it('lets a person dismiss a gap: later reports leave it out and say so', async () => {
    const first = await insights(1);
    const sso = gapId(first, (t) => SSO_QUESTIONS.some((q) => t.includes(`“${q}”`)));
    const click = await h.choose(first.ts, `dismiss:${sso}`);
    const answer = await eventually(
      () => h.slack.responses.find((r) => r.id === click.responseId),
      'the answer',
    );
    expect(JSON.stringify(answer.body)).toContain('Dismissed: later reports and digests leave');
    const again = await h.choose(first.ts, `dismiss:${sso}`, { user: 'U0OTHER' });
    const second = await eventually(
      () => h.slack.responses.find((r) => r.id === again.responseId),
      'the second answer',
    );
    expect(JSON.stringify(second.body)).toContain(`dismissed already by <@${USER}>`);
    const later = await insights(2);
    expect(listedGaps(later).map((g) => g.id)).not.toContain(sso);
    expect(shown(later)).toContain('1 gap someone dismissed is left out.');
    expect(listedGaps(later)).toHaveLength(listedGaps(first).length);
    expect(h.logs).toContain('insight_gap.dismissed');
  });

  it('answers the evidence to the person alone, escaped', async () => {
    const report = await insights(1);
    const click = await h.choose(report.ts, `evidence:${gapId(report, isRotate)}`);
    const answer = await eventually(
      () => h.slack.responses.find((r) => r.id === click.responseId),
      'the evidence',
    );
    const body = answer.body as { text: string; response_type: string };
    expect(body.response_type).toBe('ephemeral');
    expect(body.text).toContain('• Asked the docs assistant 14 times and got no answer');
    expect(body.text).toContain('        ◦ "rotate api key" (');
    expect(body.text).toContain('"rotate api key"');
    expect(body.text).toContain('Nothing about rotating keys');
    expect(reports()).toHaveLength(1);
  });
});

describe('Draft it evidence', () => {
  it('prefills the form with the wordings, counts, period, pages, searches, comments and how to go about it', async () => {
    const report = await insights(1);
    const id = gapId(report, isRotate);
    await h.choose(report.ts, `draft:${id}`);
    const { view } = await eventually(() => h.slack.views[0], 'the form');
    const input = (view.blocks as { element?: { initial_value?: string } }[]).find(
      (b) => b.element?.initial_value,
    )?.element?.initial_value;
    const prompt = String(input);
    expect(prompt.length).toBeLessThanOrEqual(3_000);
    expect(prompt).toMatch(
      /^Close a gap in the docs that readers ran into between \w+ \d+ – \w+ \d+, \d{4} \(UTC\): "/,
    );
    expect(prompt).toContain(
      '- Asked the docs assistant 14 times and got no answer, in 14 different wordings:',
    );
    const wordings = ROTATE_KEY_QUESTIONS.filter((q) => prompt.includes(`  - "${q}" (once)`));
    expect(wordings).toHaveLength(10);
    expect(prompt).toContain('  (and 4 more wordings)');
    expect(prompt).toMatch(
      /- Searched the docs \d+ times and clicked no result:\n {2}- "rotate api key" \(\d+ times, no clicks\)/,
    );
    // The seeded questions were asked from two pages, by turns (2 in 3 say where).
    expect(prompt).toMatch(
      /- Pages they were on when they asked:\n {2}- \/(guides\/authentication|api-reference\/introduction) \(\d+ times?\)\n {2}- \/(guides\/authentication|api-reference\/introduction) \(\d+ times?\)/,
    );
    expect(prompt).toMatch(
      /- Their comments with a thumbs down:\n {2}- on \/guides\/authentication: "Nothing about rotating keys" \(\d+ readers\)/,
    );
    expect(prompt).toContain('1. Look for an existing page that covers this first.');
    expect(prompt).toContain('2. Do not invent product facts');
    expect(prompt).toContain('"TODO (needs a human): …"');
    expect(JSON.stringify(view.blocks)).toContain('the latest report that listed this gap');
    // The form carries the gap, not its evidence.
    expect(String(view.private_metadata).length).toBeLessThan(300);
    expect(JSON.parse(String(view.private_metadata))).toMatchObject({ gapId: id });
  });
});

describe('did it work?', () => {
  it('says how often the need was asked and searched before the pull request and since', async () => {
    const id = await draftRotate(await insights(1));
    // The job's PR opened 5 days ago (the poll stamped it now; moved back as if it had then).
    const store = await h.openStore();
    await eventually(async () => (await store.gapWithThread(WS, id))?.gap.prAt, 'the PR stamped');
    await store.close();
    const prAt = Date.now() - 5 * 86_400_000;
    const db = new SqliteDatabase(join(h.dir, 'bot.sqlite'));
    db.prepare('UPDATE insight_gaps SET pr_at = ? WHERE id = ?').run(prAt, id);
    db.close();
    const later = await insights(2);
    // The truth: the rotate-key questions asked, unanswered, from the PR to the period's end.
    const to = Date.parse(`${new Date().toISOString().slice(0, 10)}T00:00:00Z`);
    const since = h.api.insights
      .conversations({ from: to - 14 * 86_400_000, to })
      .filter(
        (c) =>
          ROTATE_KEY_QUESTIONS.includes(c.query) &&
          c.resolutionStatus === 'unanswered' &&
          Date.parse(c.timestamp) >= prAt,
      ).length;
    expect(since).toBeGreaterThan(0);
    expect(since).toBeLessThan(14);
    const day = new Date(prAt).toLocaleDateString('en-US', {
      month: 'short',
      day: 'numeric',
      timeZone: 'UTC',
    });
    const days = Math.round((to - prAt) / 86_400_000);
    expect(shown(later)).toContain(
      `Since the pull request (${day}): asked ${since}× unanswered, searches not split at the pull request, in ${days} days. Before: asked 14×, searched `,
    );
    expect(shown(later)).toMatch(/Before: asked 14×, searched \d+× without a click in 14 days\./);
  });
});
