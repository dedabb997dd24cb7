/**
 * Issue 21, isolation: forged cross-workspace clicks and forms. BETA's person, in payloads
 * Slack signs and authorizes for BETA, names ALPHA's things on every interactive surface the
 * app registers (src/slack/listeners/*.ts):
 *
 * - block_actions `job_retry`, `job_unwatch`, `job_follow_up`, `job_view_pr` (actions.ts):
 *   ALPHA's thread id, on a message of ALPHA's channel;
 * - view_submission `job_follow_up_form` (actions.ts): ALPHA's thread id in its metadata;
 * - block_actions `insight_draft_*` and view_submission `insight_draft_form`
 *   (insight-drafts.ts): ALPHA's workspace in the form's metadata, ALPHA's gap id;
 * - block_actions `insight_gap` (insight-gaps.ts): Draft it, Show the evidence, Dismiss on
 *   ALPHA's gap, from BETA's channel and from ALPHA's;
 * - block_actions `docs_connect`, `docs_replace_key`, `docs_settings`, `docs_disconnect` and
 *   view_submission `docs_connect_form`, `docs_settings_form` (docs-admin.ts): ALPHA's
 *   workspace in the metadata or the view (distributed-connect.test.ts has the admin rules).
 *
 * No view_closed callback is registered (Slack sends none unless a modal asks for it; none
 * does). Each forgery changes nothing of ALPHA (rows, its job at the API, no Slack call with
 * its token), tells BETA's person plainly, and logs one line of ids. The real bot over HTTP,
 * on both engines.
 */
import { describe, expect, it } from 'vitest';
import { UNKNOWN_JOB } from '../../src/jobs/retry.ts';
import { FOLLOW_UP_INPUT, FOLLOW_UP_VIEW } from '../../src/slack/action-blocks.ts';
import { DOCS_ACTIONS, DOCS_VIEWS } from '../../src/slack/connect-blocks.ts';
import { choiceValue, GAP_ACTION } from '../../src/slack/gap-blocks.ts';
import { DRAFT_INPUT, DRAFT_VIEW } from '../../src/slack/insight-drafts.ts';
import { closeAfterEach } from '../helpers/distributed.ts';
import {
  A,
  type Alpha,
  alphaBefore,
  alphaUntouched,
  B,
  BETA_KEY,
  betaClick,
  betaSubmit,
  payloadBase,
  refusedLines,
  toldThrough,
  twoWorkspaces,
} from '../helpers/forged.ts';
import type { Harness } from '../helpers/harness.ts';
import { eventually } from '../helpers/net.ts';
import { engineKinds } from '../helpers/store-engines.ts';

let h: Harness;
let alpha: Alpha;
closeAfterEach(() => h);

async function start(engine: 'sqlite' | 'postgres') {
  ({ h, alpha } = await twoWorkspaces(engine));
}

const button = (actionId: string, value: string) => ({
  type: 'button',
  action_id: actionId,
  value,
});
const refusals = (surface: string) => refusedLines(h).filter((l) => l.surface === surface);

describe.each(engineKinds)('distributed mode: forged clicks and forms (%s)', (engine) => {
  it("refuses ALPHA's job on every job button and the follow-up form, as an unknown job", async () => {
    await start(engine);
    const before = await alphaBefore(h);
    const modals = h.slack.views.length;
    const at = { channel: A.channel, messageTs: alpha.active.threadTs };
    const clicks = [
      button('job_retry', String(alpha.failed.id)),
      button('job_unwatch', String(alpha.active.id)),
      button('job_follow_up', String(alpha.active.id)),
    ];
    for (const action of clicks) {
      const click = await betaClick(h, action, at);
      expect(click.status).toBe(200);
      await eventually(() => toldThrough(h, click.responseId).includes(UNKNOWN_JOB), 'told');
      // Nothing of ALPHA's job in the answer: not who asked for it, not its prompt.
      expect(toldThrough(h, click.responseId)).not.toMatch(/U0A1|SSO|changelog/);
    }
    // View PR is a link: Slack opened it, the bot does nothing.
    const link = await betaClick(h, { type: 'button', action_id: 'job_view_pr', url: 'x' }, at);
    expect(link.status).toBe(200);
    // The follow-up form, submitted with ALPHA's thread in its metadata.
    const form = await betaSubmit(
      h,
      FOLLOW_UP_VIEW,
      JSON.stringify({ threadId: alpha.active.id }),
      {
        [FOLLOW_UP_INPUT.block]: { [FOLLOW_UP_INPUT.action]: 'Push the draft to main' },
      },
    );
    expect(form.body).toEqual({
      response_action: 'errors',
      errors: { [FOLLOW_UP_INPUT.block]: UNKNOWN_JOB },
    });
    await alphaUntouched(h, before);
    expect(h.slack.views).toHaveLength(modals);
    expect(h.api.requestsTo('message')).toEqual([]);
    const ids = (l: Record<string, unknown>) => [l.userId, l.teamId, l.claimedTeamId, l.threadId];
    expect(refusals('action').map(ids)).toEqual([
      [B.user, B.team, A.team, alpha.failed.id],
      [B.user, B.team, A.team, alpha.active.id],
      [B.user, B.team, A.team, alpha.active.id],
    ]);
    expect(refusals('view').map(ids)).toEqual([[B.user, B.team, A.team, alpha.active.id]]);
  });

  it("refuses a Draft it form whose metadata is ALPHA's, and ALPHA's gap in BETA's form", async () => {
    await start(engine);
    const before = await alphaBefore(h);
    const prompt = { [DRAFT_INPUT.block]: { [DRAFT_INPUT.action]: 'Publish the roadmap' } };
    const alphaMeta = {
      teamId: A.team,
      channelId: A.channel,
      kind: 'question',
      messageTs: alpha.active.threadTs,
      actionId: 'insight_draft_question_0',
    };
    const crossed = await betaSubmit(h, DRAFT_VIEW, JSON.stringify(alphaMeta), prompt);
    expect(crossed.body).toMatchObject({ response_action: 'update' });
    expect(JSON.stringify(crossed.body)).toContain('belongs to another workspace');
    // BETA's own form, naming ALPHA's gap: the gap is none of BETA's (gaps are per workspace).
    const gapMeta = { teamId: B.team, channelId: B.channel, kind: 'question', gapId: alpha.gapId };
    const gapForm = await betaSubmit(h, DRAFT_VIEW, JSON.stringify(gapMeta), prompt);
    expect(gapForm.body).toMatchObject({ response_action: 'errors' });
    expect(JSON.stringify(gapForm.body)).toContain('no longer kept, or it belongs to another');
    await alphaUntouched(h, before);
    expect(h.api.requestsTo('create')).toEqual([]);
    expect(refusals('view')).toMatchObject([
      { userId: B.user, teamId: B.team, claimedTeamId: A.team, reason: 'other_workspace' },
    ]);
    expect(refusals('gap')).toMatchObject([
      { userId: B.user, teamId: B.team, gapId: alpha.gapId, reason: 'unknown_gap' },
    ]);
  });

  it("shows, drafts and dismisses none of ALPHA's gaps, from BETA's channel or ALPHA's", async () => {
    await start(engine);
    const before = await alphaBefore(h);
    const modals = h.slack.views.length;
    const told: string[] = [];
    for (const channel of [B.channel, A.channel])
      for (const what of ['evidence', 'draft', 'dismiss'] as const) {
        const option = {
          text: { type: 'plain_text', text: what },
          value: choiceValue(what, alpha.gapId),
        };
        const at = { channel, messageTs: alpha.active.threadTs };
        const click = await betaClick(
          h,
          { type: 'overflow', action_id: GAP_ACTION, selected_option: option },
          at,
        );
        expect(click.status).toBe(200);
        await eventually(() => toldThrough(h, click.responseId).includes('out of date'), what);
        told.push(toldThrough(h, click.responseId));
      }
    // Nothing of the gap was shown: not its title, not its state.
    expect(told.join('\n')).not.toMatch(/roadmap|Okta|dismissed/i);
    await alphaUntouched(h, before);
    expect(h.slack.views).toHaveLength(modals);
    expect(refusals('gap')).toHaveLength(6);
    expect(refusals('gap').every((l) => l.teamId === B.team && l.gapId === alpha.gapId)).toBe(true);
  });

  it("opens an older report's Draft it for BETA's workspace only, and starts nothing in ALPHA", async () => {
    await start(engine);
    const before = await alphaBefore(h);
    const n = h.slack.views.length;
    const seed = JSON.stringify({ kind: 'question', index: 0, count: 3, example: 'okta?' });
    const at = { channel: A.channel, messageTs: alpha.active.threadTs };
    const click = await betaClick(h, button('insight_draft_question_0', seed), at);
    expect(click.status).toBe(200);
    await eventually(() => h.slack.views.length > n, 'the form');
    const modal = h.slack.views.at(-1)!;
    // Opened with BETA's token, for BETA's person, with BETA's workspace in its metadata.
    expect(modal.user).toBe(B.user);
    const view = modal.view as Record<string, unknown>;
    expect(JSON.parse(String(view.private_metadata))).toMatchObject({ teamId: B.team });
    expect(JSON.stringify(view)).not.toContain('proj_alpha');
    // Submitted as it is: a job of BETA's, whose root Slack refuses in ALPHA's channel.
    const prompt = { [DRAFT_INPUT.block]: { [DRAFT_INPUT.action]: 'Answer okta' } };
    const sent = await betaSubmit(h, DRAFT_VIEW, String(view.private_metadata), prompt);
    expect(sent.body).toBeNull();
    await eventually(
      () => h.logLines().find((l) => l.msg === 'job.root_post_failed'),
      'the root refused by Slack',
    );
    await alphaUntouched(h, before);
    expect(refusedLines(h)).toEqual([]);
    // The one-job-per-insight claim is BETA's: ALPHA's own form for that message still starts.
    const alphaForm = { ...JSON.parse(String(view.private_metadata)), teamId: A.team };
    const own = await h.interact({
      type: 'view_submission',
      ...payloadBase(h, A, 'alpha'),
      view: {
        id: 'VALPHAFORM',
        team_id: A.team,
        type: 'modal',
        callback_id: DRAFT_VIEW,
        private_metadata: JSON.stringify(alphaForm),
        state: { values: { draft: { prompt: { type: 'plain_text_input', value: 'Answer it' } } } },
      },
    });
    expect(own.body).toBeNull();
  });

  it("changes no docs connection or settings of ALPHA's from BETA's Home", async () => {
    await start(engine);
    const before = await alphaBefore(h);
    const alphaMeta = JSON.stringify({ teamId: A.team, enterpriseId: null });
    const connect = await betaSubmit(h, DOCS_VIEWS.connect, alphaMeta, {
      docs_project: { value: 'proj_beta' },
      docs_key: { value: BETA_KEY },
    });
    const settings = await betaSubmit(h, DOCS_VIEWS.settings, alphaMeta, {});
    for (const form of [connect, settings])
      expect(JSON.stringify(form.body)).toContain('belongs to another workspace');
    // Home buttons from a view that says it is ALPHA's.
    for (const actionId of Object.values(DOCS_ACTIONS)) {
      const res = await h.interact({
        type: 'block_actions',
        ...payloadBase(h, B, 'beta'),
        container: { type: 'view', view_id: 'VHOME' },
        view: { id: 'VHOME', team_id: A.team, type: 'home', private_metadata: '' },
        actions: [{ action_id: actionId, block_id: 'docs_admin', type: 'button' }],
      });
      expect(res.status).toBe(200);
    }
    await alphaUntouched(h, before);
    const lines = h.logLines().filter((l) => l.msg === 'docs.admin_refused');
    expect(lines.map((l) => [l.reason, l.surface, l.teamId])).toEqual([
      ['other_workspace', 'view', B.team],
      ['other_workspace', 'view', B.team],
      ...Object.values(DOCS_ACTIONS).map(() => ['other_workspace', 'action', B.team]),
    ]);
  });
});
