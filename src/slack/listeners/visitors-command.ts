import type { App, SlackCommandMiddlewareArgs } from '@slack/bolt';
import type { Inflight } from '../../inflight.ts';
import type { Logger } from '../../log.ts';
import type { Projects } from '../../projects.ts';
import type { ReportPoster } from '../../reports/ports.ts';
import { addDays, parseVisitorsArgs } from '../../reports/range.ts';
import type { ReportService } from '../../reports/service.ts';
import { readCommand } from './command-payload.ts';
import { runReportCommand } from './report-command.ts';

/**
 * `/visitors [7d|30d|FROM TO]`: bad arguments are answered in the ack with the accepted
 * forms and nothing is fetched; otherwise ack at once, then build and post the report.
 */
export function registerVisitorsCommand(
  app: App,
  deps: {
    reports: ReportService;
    projects: Pick<Projects, 'binding'>;
    poster: ReportPoster;
    log: Logger;
    timeZone: string;
    inflight: Inflight;
    /** The bot's user name (auth.test), for the "invite me" hint. */
    botName?: () => string | undefined;
  },
): void {
  const log = deps.log.child({ component: 'visitors-command' });
  async function onVisitors({ command, ack, respond }: SlackCommandMiddlewareArgs): Promise<void> {
    const payload = await readCommand(command, ack, log);
    if (!payload) return;
    const { text, team_id, channel_id, user_id, channel_name } = payload;
    const args = parseVisitorsArgs(text, new Date(), deps.timeZone);
    if (!args.ok) {
      log.info({ channelId: channel_id, userId: user_id }, 'visitors.bad_arguments');
      await ack({ response_type: 'ephemeral', text: args.error });
      return;
    }
    await ack();
    const tell = (reply: string) =>
      respond({ response_type: 'ephemeral', replace_original: false, text: reply });
    await runReportCommand({
      event: 'visitors',
      slowNote: 'Working on your traffic report…',
      channel: { id: channel_id, name: channel_name },
      tell,
      log,
      botName: deps.botName,
      run: async () => {
        const bound = await deps.projects.binding(team_id, channel_id);
        const report = await deps.reports.build(args.range, bound?.projectId);
        await deps.poster.postReport(channel_id, report, {
          title: 'Docs traffic',
          // Named by the last day included, as the title shows it.
          fileKey: `${args.range.from}_${addDays(args.range.to, -1)}-${Date.now()}`,
        });
        log.info(
          { channelId: channel_id, from: args.range.from, to: args.range.to },
          'visitors.posted',
        );
      },
    });
  }
  app.command('/visitors', (args) => deps.inflight.track(onVisitors(args)));
}
