import type { App } from '@slack/bolt';
import type { Inflight } from '../../inflight.ts';
import type { GapBook } from '../../insights/gap-book.ts';
import type { BotRef } from '../../invite-hint.ts';
import type { PendingCommands } from '../../jobs/pending-commands.ts';
import type { JobChat } from '../../jobs/ports.ts';
import type { JobService } from '../../jobs/service.ts';
import type { JobStatus } from '../../jobs/status.ts';
import type { Logger } from '../../log.ts';
import type { Projects } from '../../projects.ts';
import type { ReportPoster } from '../../reports/ports.ts';
import type { ReportService } from '../../reports/service.ts';
import type { Store, WorkspaceRef } from '../../store/types.ts';
import type { WorkLanes } from '../../work-queue.ts';
import { RefusedAuthorization } from '../app.ts';
import type { HomePublisher } from '../home.ts';
import { registerHome } from '../home.ts';
import { type ButtonDeps, registerActions } from './actions.ts';
import { registerAgentCommand } from './agent-command.ts';
import { registerDirectMessages } from './direct-messages.ts';
import { type InsightDraftDeps, registerInsightDrafts } from './insight-drafts.ts';
import { registerInsightGaps } from './insight-gaps.ts';
import { type InsightsCommandDeps, registerInsightsCommand } from './insights-command.ts';
import { registerMentions } from './mentions.ts';
import type { SubCommandDeps } from './sub-commands.ts';
import { registerThreadReplies } from './thread-replies.ts';
import { registerVisitorsCommand } from './visitors-command.ts';

export interface ListenerDeps {
  jobs: JobService;
  /** `/agent status`. */
  jobStatus: JobStatus;
  /** Which project a channel uses; `/agent project`. */
  projects: Projects;
  /** `/agent doctor` (and `doctor` in a mention or DM): the setup checks, to the asker only. */
  doctor?: SubCommandDeps['doctor'];
  /** The `/agent help` text (the distributed mode has its own). */
  usage?: string;
  /** The App Home (published on `app_home_opened`). */
  home?: HomePublisher;
  store: Store;
  /** Answers only the requester sees (mentions). */
  chat: JobChat;
  reports: ReportService;
  /** The report poster with a workspace's own client. */
  posterFor: (ws: WorkspaceRef) => Promise<ReportPoster>;
  timeZone: string;
  log: Logger;
  /** Who the bot is in a workspace (its name in single-workspace mode, else its user id). */
  bot?: (ws: WorkspaceRef) => Promise<BotRef | undefined>;
  /** Each listener run counts as in-flight work, which a shutdown waits for. */
  inflight: Inflight;
  /** Where the work that follows an ack runs, out of the request's turn, by lane. */
  work: WorkLanes;
  /** Where an acked `/agent` is recorded until its start runs (a crash loses none). */
  pending?: PendingCommands;
  /** The root message's buttons and the follow-up form. */
  buttons: ButtonDeps;
  /** `/insights` (the insights service and how its report is posted) and its Draft it form. */
  insights?: Pick<InsightsCommandDeps, 'insights' | 'insightsPosterFor' | 'gapBook'> &
    Pick<InsightDraftDeps, 'agentBudget'> & { gapBook?: GapBook | undefined };
}

/** One registration point per Slack surface. */
export function registerListeners(app: App, deps: ListenerDeps): void {
  registerAgentCommand(app, deps);
  registerThreadReplies(app, deps);
  registerMentions(app, deps);
  registerDirectMessages(app, deps);
  registerVisitorsCommand(app, deps);
  if (deps.insights) {
    registerInsightsCommand(app, { ...deps, ...deps.insights });
    registerInsightDrafts(app, { ...deps, ...deps.insights });
    const { gapBook } = deps.insights;
    if (gapBook) registerInsightGaps(app, { ...deps, ...deps.insights, gapBook });
  }
  registerActions(app, deps);
  if (deps.home) registerHome(app, { home: deps.home, work: deps.work.answers, log: deps.log });
  app.error(async (err) => {
    // A request of a workspace with no installation: logged once already, by its ids.
    if ((err as { original?: unknown }).original instanceof RefusedAuthorization) return;
    // Surprises only: expected failures are handled, and answered, where they happen.
    deps.log.error({ err, component: 'bolt' }, 'slack.unhandled_error');
  });
}
