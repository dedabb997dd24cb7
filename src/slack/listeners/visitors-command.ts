import type { App, SlackCommandMiddlewareArgs } from '@slack/bolt';
import type { Inflight } from '../../inflight.ts';
import type { BotRef } from '../../invite-hint.ts';
import type { Logger } from '../../log.ts';
import type { Projects } from '../../projects.ts';
import type { ReportPoster } from '../../reports/ports.ts';
import { addDays } from '../../reports/range.ts';
import type { ReportService } from '../../reports/service.ts';
import type { WorkspaceRef } from '../../store/types.ts';
import type { WorkLanes } from '../../work-queue.ts';
import { handleReportCommand } from './report-command.ts';

/**
 * `/visitors [7d|30d|FROM TO]`: bad arguments are answered in the ack with the accepted
 * forms and nothing is fetched; otherwise ack at once, then build and post the report.
 */
export function registerVisitorsCommand(
  app: App,
  deps: {
    reports: ReportService;
    projects: Pick<Projects, 'binding'>;
    /** The report poster with the workspace's own client. */
    posterFor: (ws: WorkspaceRef) => Promise<ReportPoster>;
    log: Logger;
    timeZone: string;
    inflight: Inflight;
    work: Pick<WorkLanes, 'reports'>;
    /** Who the bot is in the workspace, for the "invite me" hint. */
    bot?: (ws: WorkspaceRef) => Promise<BotRef | undefined>;
  },
): void {
  const log = deps.log.child({ component: 'visitors-command' });
  const onVisitors = (args: SlackCommandMiddlewareArgs) =>
    handleReportCommand(args, {
      event: 'visitors',
      slowNote: 'Working on your traffic report…',
      timeZone: deps.timeZone,
      log,
      work: deps.work.reports,
      projects: deps.projects,
      bot: deps.bot,
      post: async ({ range, projectId, channelId, ws }) => {
        const report = await deps.reports.build(range, projectId, ws);
        const poster = await deps.posterFor(ws);
        await poster.postReport(channelId, report, {
          title: 'Docs traffic',
          // Named by the last day included, as the title shows it.
          fileKey: `${range.from}_${addDays(range.to, -1)}-${Date.now()}`,
        });
      },
    });
  app.command('/visitors', (args) => deps.inflight.track(onVisitors(args)));
}
