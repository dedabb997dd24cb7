import type {
  AllMiddlewareArgs,
  App,
  SlackActionMiddlewareArgs,
  SlackViewMiddlewareArgs,
} from '@slack/bolt';
import type { WebClient } from '@slack/web-api';
import { z } from 'zod';
import type { Budget } from '../../api/budget.ts';
import type { Inflight } from '../../inflight.ts';
import type { ClaimOutcome, GapBook } from '../../insights/gap-book.ts';
import type { JobChat } from '../../jobs/ports.ts';
import type { JobService } from '../../jobs/service.ts';
import type { Logger } from '../../log.ts';
import type { Projects } from '../../projects.ts';
import type { JobOrigin, Store, WorkspaceRef } from '../../store/types.ts';
import type { WorkLanes } from '../../work-queue.ts';
import { refusalModal } from '../access-middleware.ts';
import { toChatError } from '../chat.ts';
import {
  budgetSpentError,
  DRAFT_ACTION,
  DRAFT_INPUT,
  DRAFT_VIEW,
  DRAFTED_ERROR,
  DraftMetadata,
  decodeSeed,
  draftModal,
  GAP_ORIGIN_LABEL,
  ORIGIN_LABEL,
  seedPrompt,
} from '../insight-drafts.ts';
import { readJson } from '../json-value.ts';
import { payloadTeam } from '../workspace-claims.ts';
import { gapOfChannel, unknownGap, whereText } from './insight-gaps.ts';
import { ReportAction } from './report-action.ts';

export interface InsightDraftDeps {
  jobs: Pick<JobService, 'startJob'>;
  projects: Pick<Projects, 'forChannel'>;
  /** The agent budget of a project: shown in the form (startJob checks it again). */
  agentBudget: (projectId: string) => Pick<Budget, 'status'>;
  store: Pick<Store, 'claimEvent' | 'eventSeen'>;
  /** Gaps and their state: a gap's form claims the gap (one job per gap). */
  gapBook?: Pick<GapBook, 'claim' | 'release' | 'get'> | undefined;
  chat: Pick<JobChat, 'tellUser'>;
  work: WorkLanes;
  log: Logger;
  inflight: Inflight;
}

const Click = ReportAction.extend({
  actions: z.array(z.object({ action_id: z.string(), value: z.string() })).length(1),
});

const Submission = z.object({
  type: z.literal('view_submission'),
  user: z.object({ id: z.string().min(1) }),
  view: z.object({
    id: z.string().min(1),
    private_metadata: z.string(),
    state: z.object({
      values: z.object({
        [DRAFT_INPUT.block]: z.object({
          [DRAFT_INPUT.action]: z.object({ value: z.string().nullish() }),
        }),
      }),
    }),
  }),
});

const STALE =
  'This button is out of date (the bot has changed since the report was posted). Run `/insights` again, or use `/agent`.';
const FORM_FAILED =
  "I couldn't open the form (Slack said the click was too old). Please click Draft it again.";
const EMPTY = 'Write what the docs agent should do.';
const NOT_RECORDED = "I couldn't record this (a storage error). Please submit it again.";
const BUSY = "I'm very busy right now and couldn't start the job. Please use `/agent` in a minute.";

/** One job per form, however often Slack sends its submission. */
export const draftKey = (viewId: string) => `insight_draft:${viewId}`;
/**
 * One job per insight (a button on a message), however many forms its clicks opened; keyed
 * by its workspace too, so that no other workspace's form can take an insight's one job.
 */
export const insightKey = (m: DraftMetadata) =>
  m.messageTs && m.actionId
    ? `insight_drafted:${m.teamId}:${m.channelId}:${m.messageTs}:${m.actionId}`
    : undefined;
const OTHER_WORKSPACE = 'This form belongs to another workspace. Nothing was started.';
const GAP_GONE =
  'This gap is not one this channel can draft (it is no longer kept, or it belongs to another project or workspace). Close the form and run `/insights` again.';
const TAKEN =
  'A job was already started from this insight: look for "Drafted from" in the channel. For another, use `/agent`.';

/**
 * The Draft it form's submission starts a job as `/agent` would: for a gap (its menu opened
 * the form, insight-gaps.ts), once per gap while its job runs or once it has a pull request,
 * claimed on the gap's row before anything starts (gap-book.ts); the job records the gap.
 * A button of a report posted before gaps were kept opens the form itself (right after the
 * ack: a trigger id lasts 3 s), with a prompt written from the evidence the button carries;
 * its submission is claimed once per button and form, as before.
 */
export function registerInsightDrafts(app: App, deps: InsightDraftDeps): void {
  const log = deps.log.child({ component: 'insight-drafts' });

  async function onClick(args: SlackActionMiddlewareArgs & AllMiddlewareArgs): Promise<void> {
    await args.ack();
    const tell = (text: string) =>
      args
        .respond({ response_type: 'ephemeral', replace_original: false, text })
        .catch((err: unknown) => log.warn({ err }, 'insight_draft.answer_failed'));
    const parsed = Click.safeParse(args.body);
    const seed = parsed.success ? decodeSeed(parsed.data.actions[0]!.value) : undefined;
    if (!parsed.success || !seed) {
      log.warn({ issues: parsed.error?.issues.slice(0, 3) }, 'insight_draft.stale');
      return void (await tell(STALE));
    }
    const { team, channel, user, trigger_id, container } = parsed.data;
    const meta: DraftMetadata = { teamId: team.id, channelId: channel.id, kind: seed.kind };
    if (container?.message_ts) meta.messageTs = container.message_ts;
    meta.actionId = parsed.data.actions[0]!.action_id;
    try {
      const projectId = await deps.projects.forChannel(team.id, channel.id);
      const status = await deps.agentBudget(projectId).status();
      const view = draftModal(seedPrompt(seed), meta, { projectId, ...status });
      await args.client.views.open({ trigger_id, view });
      log.info({ channelId: channel.id, userId: user.id, kind: seed.kind }, 'insight_draft.opened');
    } catch (err) {
      log.warn({ err, channelId: channel.id }, 'insight_draft.form_not_opened');
      await tell(FORM_FAILED);
    }
  }

  async function onSubmit(args: SlackViewMiddlewareArgs & AllMiddlewareArgs): Promise<void> {
    const fail = (error: string) =>
      args.ack({ response_action: 'errors', errors: { [DRAFT_INPUT.block]: error } });
    const parsed = Submission.safeParse(args.body);
    const meta = parsed.success
      ? readJson(DraftMetadata, parsed.data.view.private_metadata)
      : undefined;
    if (!parsed.success || !meta) {
      log.warn({ issues: parsed.error?.issues.slice(0, 3) }, 'insight_draft.malformed');
      return fail('This form is out of date. Close it and click Draft it again.');
    }
    const { view, user } = parsed.data;
    if (!ownForm(args, meta, user.id))
      return args.ack({ response_action: 'update', view: refusalModal(OTHER_WORKSPACE) });
    const at = { viewId: view.id, userId: user.id, gapId: meta.gapId };
    // The form's own workspace: ownForm found it is the one Slack vouches for.
    const ws = { teamId: meta.teamId, enterpriseId: args.context.enterpriseId };
    const prompt = (view.state.values[DRAFT_INPUT.block]?.[DRAFT_INPUT.action]?.value ?? '').trim();
    if (!prompt) return fail(EMPTY);
    const spent = await budgetSpent(meta);
    if (spent) return fail(spent);
    const tell = (text: string) =>
      deps.chat.tellUser(ws, { channelId: meta.channelId, userId: user.id, text });
    const claim =
      meta.gapId === undefined
        ? await claimDraft(view.id, meta)
        : await claimGap(meta, ws, meta.gapId, view.id, user.id);
    if (claim === 'error') return fail(NOT_RECORDED);
    if (claim === 'missing') return fail(GAP_GONE);
    if (claim === 'taken') {
      log.info(at, 'insight_draft.already_drafted');
      return fail(TAKEN);
    }
    if (typeof claim === 'object') {
      log.info(at, 'insight_draft.already_drafted');
      await fail(DRAFTED_ERROR);
      return tellWhere(args.client, claim, tell);
    }
    await args.ack();
    if (claim === 'duplicate') return void log.info(at, 'insight_draft.duplicate');
    const req = {
      ...ws,
      channelId: meta.channelId,
      userId: user.id,
      prompt,
      ...(meta.gapId === undefined ? {} : { gapId: meta.gapId }),
    };
    log.info({ ...at, channelId: meta.channelId, kind: meta.kind }, 'insight_draft.submitted');
    const start = async () => {
      const origin = await originOf(args.client, meta, log);
      await deps.jobs.startJob(origin ? { ...req, origin } : req, tell);
    };
    if (!deps.work.starts.offer('job.start', start)) {
      log.warn(at, 'insight_draft.busy');
      // Nothing starts: the gap is open again, for this form or another.
      if (meta.gapId !== undefined)
        await deps.gapBook
          ?.release(ws, meta.gapId, view.id)
          .catch((err: unknown) => log.warn({ err, ...at }, 'insight_draft.release_failed'));
      await tell(BUSY).catch((err: unknown) => log.warn({ err }, 'insight_draft.answer_failed'));
    }
  }

  /** The metadata is the submitter's to forge: its workspace must be the form's own. */
  function ownForm(
    args: SlackViewMiddlewareArgs & AllMiddlewareArgs,
    meta: DraftMetadata,
    userId: string,
  ): boolean {
    const teamId = payloadTeam(args.body) ?? args.context.teamId;
    if (teamId === meta.teamId) return true;
    const ids = { userId, teamId, claimedTeamId: meta.teamId, gapId: meta.gapId };
    log.warn({ surface: 'view', reason: 'other_workspace', ...ids }, 'workspace.refused');
    return false;
  }

  /** Where the gap's job is, to the person whose form was refused (a link it cannot hold). */
  async function tellWhere(
    client: WebClient,
    taken: Extract<ClaimOutcome, { outcome: 'taken' }>,
    tell: (text: string) => Promise<void>,
  ): Promise<void> {
    const where = await whereText(client, taken.gap, taken.job, taken.state, log);
    await tell(where).catch((err: unknown) => log.warn({ err }, 'insight_draft.answer_failed'));
  }

  /** The gap's claim (gap-book.ts): one job per gap while it runs or once it opened a PR. */
  async function claimGap(
    meta: DraftMetadata,
    ws: WorkspaceRef,
    gapId: number,
    viewId: string,
    userId: string,
  ): Promise<
    'new' | 'duplicate' | 'missing' | 'error' | Extract<ClaimOutcome, { outcome: 'taken' }>
  > {
    if (!deps.gapBook) return 'missing';
    try {
      const found = await deps.gapBook.get(ws, gapId);
      const where = { ...meta, userId };
      if (!found) unknownGap(log, gapId, where);
      if (!found || !(await gapOfChannel(deps.projects, found.gap, where, log))) return 'missing';
      const c = await deps.gapBook.claim(ws, gapId, viewId, userId);
      return c.outcome === 'taken' ? c : c.outcome;
    } catch (err) {
      log.error({ err, viewId, gapId }, 'insight_draft.claim_failed');
      return 'error';
    }
  }

  /**
   * The budget, read before anything is claimed: a spent one is said in the form (the text
   * stays there to submit later) and claims nothing. startJob reads it again.
   */
  async function budgetSpent(meta: DraftMetadata): Promise<string | undefined> {
    try {
      const projectId = await deps.projects.forChannel(meta.teamId, meta.channelId);
      const status = await deps.agentBudget(projectId).status();
      return status.remaining > 0 ? undefined : budgetSpentError({ projectId, ...status });
    } catch (err) {
      // startJob reads it again and answers the person if it is spent.
      log.warn({ err, channelId: meta.channelId }, 'insight_draft.budget_unread');
      return undefined;
    }
  }

  /**
   * 'new' for the first form submitted for an insight; 'duplicate' when this form's
   * submission came again (it started the job); 'taken' when another form (a second click,
   * someone else) started the insight's job. A form refused as 'taken' claims nothing, so it
   * is refused the same way if submitted again.
   */
  async function claimDraft(
    viewId: string,
    meta: DraftMetadata,
  ): Promise<'new' | 'duplicate' | 'taken' | 'error'> {
    try {
      const insight = insightKey(meta);
      const now = Date.now();
      if (!insight)
        return (await deps.store.claimEvent([draftKey(viewId)], now)) ? 'new' : 'duplicate';
      if (await deps.store.claimEvent([insight], now)) {
        await deps.store.claimEvent([draftKey(viewId)], now);
        return 'new';
      }
      return (await deps.store.eventSeen(draftKey(viewId))) ? 'duplicate' : 'taken';
    } catch (err) {
      log.error({ err, viewId }, 'insight_draft.claim_failed');
      return 'error';
    }
  }

  app.action({ type: 'block_actions', action_id: new RegExp(`^${DRAFT_ACTION}_`) }, (args) =>
    deps.inflight.track(onClick(args)),
  );
  app.view(DRAFT_VIEW, (args) => deps.inflight.track(onSubmit(args)));
}

/**
 * A link to the insight the form was opened from, for the job's root; none (and a log line)
 * when Slack will not give one: the job starts all the same.
 */
async function originOf(
  client: WebClient,
  meta: DraftMetadata,
  log: Logger,
): Promise<JobOrigin | undefined> {
  if (!meta.messageTs) return undefined;
  try {
    const res = await client.chat.getPermalink({
      channel: meta.channelId,
      message_ts: meta.messageTs,
    });
    const labels = meta.gapId === undefined ? ORIGIN_LABEL : GAP_ORIGIN_LABEL;
    if (res.permalink) return { url: res.permalink, label: labels[meta.kind] };
  } catch (err) {
    log.warn({ err: toChatError(err), channelId: meta.channelId }, 'insight_draft.no_permalink');
  }
  return undefined;
}
