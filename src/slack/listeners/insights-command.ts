import type { App, SlackCommandMiddlewareArgs } from '@slack/bolt';
import type { Inflight } from '../../inflight.ts';
import type { GapBook } from '../../insights/gap-book.ts';
import type { InsightsPoster } from '../../insights/ports.ts';
import type { InsightsService } from '../../insights/service.ts';
import type { BotRef } from '../../invite-hint.ts';
import type { Logger } from '../../log.ts';
import type { Projects } from '../../projects.ts';
import type { WorkspaceRef } from '../../store/types.ts';
import type { WorkLanes } from '../../work-queue.ts';
import { handleReportCommand } from './report-command.ts';

export interface InsightsCommandDeps {
  insights: Pick<InsightsService, 'build'>;
  /** Posts the report (src/slack/insights-poster.ts), with the workspace's own client. */
  insightsPosterFor: (ws: WorkspaceRef) => Promise<Pick<InsightsPoster, 'post'>>;
  /** The gaps' state across reports (src/insights/gap-book.ts); without it, listed plainly. */
  gapBook?: Pick<GapBook, 'resolve'> | undefined;
  projects: Pick<Projects, 'binding'>;
  log: Logger;
  timeZone: string;
  inflight: Inflight;
  work: Pick<WorkLanes, 'reports'>;
  bot?: (ws: WorkspaceRef) => Promise<BotRef | undefined>;
}

/**
 * `/insights [7d|30d|Nd|FROM TO]`: the range rules and errors of `/visitors` (answered in the
 * ack, nothing fetched); otherwise ack at once, build for the channel's project, and post.
 */
export function registerInsightsCommand(app: App, deps: InsightsCommandDeps): void {
  const log = deps.log.child({ component: 'insights-command' });
  const onInsights = (args: SlackCommandMiddlewareArgs) =>
    handleReportCommand(args, {
      event: 'insights',
      slowNote: 'Working on your insights report…',
      timeZone: deps.timeZone,
      log,
      work: deps.work.reports,
      projects: deps.projects,
      bot: deps.bot,
      post: async ({ range, projectId, channelId, ws }) => {
        // The workspace's own: its key, its budget, its cache, its vectors, its gaps.
        const report = await deps.insights.build(range, projectId, { workspace: ws });
        const gaps = await deps.gapBook?.resolve(ws, report, projectId);
        const poster = await deps.insightsPosterFor(ws);
        await poster.post(channelId, report, gaps ? { gaps } : {});
      },
    });
  app.command('/insights', (args) => deps.inflight.track(onInsights(args)));
}
