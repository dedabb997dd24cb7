import type { App, SlackCommandMiddlewareArgs } from '@slack/bolt';
import { ChatError, NOT_IN_CHANNEL_CODES } from '../../chat-errors.ts';
import type { Inflight } from '../../inflight.ts';
import { conversationKind, kindFromChannelName, notInChannelText } from '../../invite-hint.ts';
import type { Logger } from '../../log.ts';
import type { Projects } from '../../projects.ts';
import { describeReportFailure } from '../../reports/failures.ts';
import type { ReportPoster } from '../../reports/ports.ts';
import { addDays, parseVisitorsArgs } from '../../reports/range.ts';
import type { ReportService } from '../../reports/service.ts';
import { readCommand } from './command-payload.ts';

/** Past this, the requester gets a short "working on it" note. */
const SLOW_MS = 2_500;

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
    const slow = setTimeout(() => {
      tell('Working on your traffic report…').catch((err: unknown) =>
        log.warn({ err }, 'visitors.note_failed'),
      );
    }, SLOW_MS);
    try {
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
    } catch (err) {
      if (err instanceof ChatError) {
        log.warn({ err, channelId: channel_id }, 'visitors.post_failed');
        await tell(
          NOT_IN_CHANNEL_CODES.has(err.code)
            ? notInChannelText(
                'post the report',
                conversationKind(channel_id, kindFromChannelName(channel_name)),
                deps.botName?.(),
              )
            : `I couldn't post the report here (${err.code}). Please try again.`,
        );
      } else {
        log.warn({ err, channelId: channel_id }, 'visitors.failed');
        await tell(describeReportFailure(err));
      }
    } finally {
      clearTimeout(slow);
    }
  }
  app.command('/visitors', (args) => deps.inflight.track(onVisitors(args)));
}
