import type { AllMiddlewareArgs, App, SlackActionMiddlewareArgs } from '@slack/bolt';
import type { WebClient } from '@slack/web-api';
import { z } from 'zod';
import type { Budget } from '../../api/budget.ts';
import type { Inflight } from '../../inflight.ts';
import { draftPrompt, evidenceLines, type GapEvidence } from '../../insights/evidence.ts';
import { BLOCKING, type GapBook } from '../../insights/gap-book.ts';
import type { Logger } from '../../log.ts';
import { escapeAndTruncate, escapeMrkdwn, truncate } from '../../mrkdwn.ts';
import type { Projects } from '../../projects.ts';
import { formatRange } from '../../reports/range.ts';
import type { JobThread, WorkspaceRef } from '../../store/types.ts';
import { toChatError } from '../chat.ts';
import { GAP_ACTION, readChoice } from '../gap-blocks.ts';
import { type DraftMetadata, draftedWhere, draftModal } from '../insight-drafts.ts';
import { ReportAction } from './report-action.ts';

export interface InsightGapDeps {
  gapBook: Pick<GapBook, 'get' | 'dismiss'>;
  projects: Pick<Projects, 'forChannel'>;
  /** The agent budget of a project: shown in the form. */
  agentBudget: (projectId: string) => Pick<Budget, 'status'>;
  log: Logger;
  inflight: Inflight;
}

const Choice = ReportAction.extend({
  actions: z
    .array(z.object({ action_id: z.string(), selected_option: z.object({ value: z.string() }) }))
    .length(1),
});
type Choice = z.infer<typeof Choice>;

const STALE =
  'This menu is out of date (the gap is no longer kept). Run `/insights` again, or use `/agent`.';
const FORM_FAILED =
  "I couldn't open the form (Slack said the click was too old). Please choose Draft it again.";
const NOT_READ = "I couldn't read this gap (a storage error). Please try again in a minute.";
/** A gap id that is not one of the workspace's: out of date, or from another's report. */
const NOT_HERE =
  'This gap is not kept in this workspace (the menu is out of date, or it came from another workspace). Run `/insights` again, or use `/agent`.';

/**
 * The menu (⋯) on each open gap of an insights report: "Draft it" opens the form prefilled
 * with the gap's evidence, unless the gap was drafted already (then the person is told where
 * its job is, and nothing opens); "Show the evidence" answers it to the person alone;
 * "Dismiss" marks the gap as needing nothing, so later reports leave it out.
 */
export function registerInsightGaps(app: App, deps: InsightGapDeps): void {
  const log = deps.log.child({ component: 'insight-gaps' });

  async function onChoice(args: SlackActionMiddlewareArgs & AllMiddlewareArgs): Promise<void> {
    await args.ack();
    const tell = (text: string) =>
      args
        .respond({ response_type: 'ephemeral', replace_original: false, text })
        .catch((err: unknown) => log.warn({ err }, 'insight_gap.answer_failed'));
    const parsed = Choice.safeParse(args.body);
    const choice = parsed.success
      ? readChoice(parsed.data.actions[0]!.selected_option.value)
      : undefined;
    if (!parsed.success || !choice) {
      log.warn({ issues: parsed.error?.issues.slice(0, 3) }, 'insight_gap.stale');
      return void (await tell(STALE));
    }
    // The workspace Slack vouches for (the request's authorization), never a value's claim.
    const ws = {
      teamId: args.context.teamId ?? parsed.data.team.id,
      enterpriseId: args.context.enterpriseId,
    };
    const at = { gapId: choice.id, userId: parsed.data.user.id, what: choice.what };
    const found = await deps.gapBook.get(ws, choice.id).catch((err: unknown) => {
      log.error({ err, gapId: choice.id }, 'insight_gap.unread');
      return null;
    });
    if (found === null) return void (await tell(NOT_READ));
    const where = {
      teamId: parsed.data.team.id,
      channelId: parsed.data.channel.id,
      userId: parsed.data.user.id,
    };
    if (!found) {
      unknownGap(log, choice.id, { ...where, teamId: ws.teamId });
      return void (await tell(NOT_HERE));
    }
    const own = await gapOfChannel(deps.projects, found.gap, where, log).catch((err: unknown) => {
      log.error({ err, gapId: choice.id }, 'insight_gap.unread');
      return null;
    });
    if (own === null) return void (await tell(NOT_READ));
    if (!own) return void (await tell(STALE));
    log.info({ ...at, state: found.state }, 'insight_gap.chosen');
    if (choice.what === 'evidence')
      return void (await tell(evidenceText(found.gap.title, found.evidence)));
    if (choice.what === 'dismiss')
      return void (await tell(await dismiss(ws, choice.id, parsed.data, args.client)));
    if (BLOCKING.has(found.state)) {
      log.info(at, 'insight_gap.already_drafted');
      const where = await whereText(args.client, found.gap, found.thread, found.state, log);
      return void (await tell(where));
    }
    await openForm(args, parsed.data, choice.id, found.evidence, found.gap.title, tell);
  }

  async function openForm(
    args: SlackActionMiddlewareArgs & AllMiddlewareArgs,
    c: Choice,
    gapId: number,
    evidence: GapEvidence | undefined,
    title: string,
    tell: (text: string) => Promise<unknown>,
  ): Promise<void> {
    const kind = evidence?.kind ?? 'question';
    const meta: DraftMetadata = { teamId: c.team.id, channelId: c.channel.id, kind, gapId };
    if (c.container?.message_ts) meta.messageTs = c.container.message_ts;
    const prompt = evidence
      ? draftPrompt(evidence)
      : `Close a gap in the docs that readers ran into: "${title}". Look for an existing page first; do not invent product facts, mark what a human must confirm.`;
    const note = evidence
      ? `Written from what readers did ${escapeMrkdwn(formatRange(evidence.period))} (${escapeMrkdwn(evidence.period.timeZone)}), the latest report that listed this gap. Edit it as you like.`
      : undefined;
    try {
      const projectId = await deps.projects.forChannel(c.team.id, c.channel.id);
      const status = await deps.agentBudget(projectId).status();
      const view = draftModal(prompt, meta, { projectId, ...status }, note);
      await args.client.views.open({ trigger_id: c.trigger_id, view });
      log.info({ channelId: c.channel.id, userId: c.user.id, gapId }, 'insight_draft.opened');
    } catch (err) {
      log.warn({ err, channelId: c.channel.id }, 'insight_draft.form_not_opened');
      await tell(FORM_FAILED);
    }
  }

  async function dismiss(
    ws: WorkspaceRef,
    id: number,
    c: Choice,
    client: WebClient,
  ): Promise<string> {
    const r = await deps.gapBook.dismiss(ws, id, c.user.id).catch((err: unknown) => {
      log.error({ err, gapId: id }, 'insight_gap.dismiss_failed');
      return undefined;
    });
    if (!r) return NOT_READ;
    if (r.outcome === 'missing') return NOT_HERE;
    if (r.outcome === 'already') {
      const by = r.gap.dismissedBy ? ` by <@${r.gap.dismissedBy}>` : '';
      return `This gap was dismissed already${by}: later reports leave it out.`;
    }
    if (r.outcome === 'drafted') return whereText(client, r.gap, r.job, r.state, log);
    log.info({ gapId: id, userId: c.user.id }, 'insight_gap.dismissed');
    return 'Dismissed: later reports and digests leave this gap out. Draft it from an earlier report to take it back.';
  }

  app.action({ type: 'block_actions', action_id: GAP_ACTION }, (args) =>
    deps.inflight.track(onChoice(args)),
  );
}

/**
 * Whether a gap is one the request's conversation may act on: a gap of the project its
 * channel uses (gaps are kept per project, and a gap id is a number anyone can write into a
 * payload). Logged when it is not.
 */
export async function gapOfChannel(
  projects: Pick<Projects, 'forChannel'>,
  gap: { id: number; projectId: string },
  where: { teamId: string; channelId: string; userId?: string | undefined },
  log: Logger,
): Promise<boolean> {
  const projectId = await projects.forChannel(where.teamId, where.channelId);
  if (gap.projectId === projectId) return true;
  const { teamId, channelId, userId } = where;
  log.warn(
    {
      surface: 'gap',
      reason: 'other_project',
      gapId: gap.id,
      userId,
      teamId,
      channelId,
      projectId,
    },
    'workspace.refused',
  );
  return false;
}

/**
 * A gap id that is none of the workspace's gaps (another workspace's, or one forgotten): the
 * request is refused, and the line says so (ids only).
 */
export function unknownGap(
  log: Logger,
  gapId: number,
  where: { teamId: string; channelId: string; userId?: string | undefined },
): void {
  log.warn({ surface: 'gap', reason: 'unknown_gap', gapId, ...where }, 'workspace.refused');
}

/** Where a drafted gap's job is, with a link to its thread when Slack gives one. */
export async function whereText(
  client: WebClient,
  gap: { claimedBy: string | null; claimedAt: number | null },
  job: JobThread | undefined,
  state: Parameters<typeof draftedWhere>[0]['state'],
  log: Logger,
): Promise<string> {
  let threadLink: string | undefined;
  if (job && !job.rootTs.startsWith('pending:')) {
    try {
      const res = await client.chat.getPermalink({
        channel: job.channelId,
        message_ts: job.rootTs,
      });
      threadLink = res.permalink;
    } catch (err) {
      log.warn({ err: toChatError(err), threadId: job.id }, 'insight_gap.no_thread_link');
    }
  }
  return draftedWhere({
    state,
    by: gap.claimedBy,
    at: gap.claimedAt,
    threadLink,
    prLink: job?.prLink,
  });
}

/** The gap's evidence, for the person who asked (mrkdwn, escaped, within a message). */
function evidenceText(title: string, e: GapEvidence | undefined): string {
  if (!e) return `No evidence is kept for “${escapeAndTruncate(title, 300)}”.`;
  const head = `*Evidence for “${escapeAndTruncate(e.title, 300)}”*, ${escapeMrkdwn(formatRange(e.period))} (${escapeMrkdwn(e.period.timeZone)}):`;
  // Leading spaces do not indent in a message: the prompt's list marks become bullets.
  const bullet = (line: string) =>
    line
      .replace(/^ {2}- /, '        ◦ ')
      .replace(/^ {2}\(/, '        (')
      .replace(/^- /, '• ');
  return truncate(
    [head, ...evidenceLines(e).map((l) => bullet(escapeMrkdwn(l)))].join('\n'),
    3_000,
  );
}
