import type { App, SlackCommandMiddlewareArgs } from '@slack/bolt';
import type { WebClient } from '@slack/web-api';
import { NOT_IN_CHANNEL_CODES } from '../../chat-errors.ts';
import type { Inflight } from '../../inflight.ts';
import type { InsightsReport, InsightsService } from '../../insights/service.ts';
import type { Logger } from '../../log.ts';
import type { Projects } from '../../projects.ts';
import { toChatError } from '../chat.ts';
import { type InsightsView, insightsMessage } from '../insights-blocks.ts';
import { handleReportCommand } from './report-command.ts';

/** Marks an insights report's message. */
export const INSIGHTS_EVENT = 'docs_insights_report';
/** Refusals a plain message would get too. */
const CANNOT_POST = new Set([...NOT_IN_CHANNEL_CODES, 'is_archived', 'invalid_auth']);

export interface InsightsCommandDeps {
  insights: Pick<InsightsService, 'build'>;
  projects: Pick<Projects, 'binding'>;
  log: Logger;
  timeZone: string;
  inflight: Inflight;
  view: InsightsView;
  botName?: () => string | undefined;
}

/**
 * `/insights [7d|30d|Nd|FROM TO]`: the range rules and errors of `/visitors` (answered in the
 * ack, nothing fetched); otherwise ack at once, build for the channel's project, and post.
 */
export function registerInsightsCommand(app: App, deps: InsightsCommandDeps): void {
  const log = deps.log.child({ component: 'insights-command' });
  const onInsights = (args: SlackCommandMiddlewareArgs & { client: WebClient }) =>
    handleReportCommand(args, {
      event: 'insights',
      slowNote: 'Working on your insights report…',
      timeZone: deps.timeZone,
      log,
      projects: deps.projects,
      botName: deps.botName,
      post: async ({ range, projectId, channelId }) => {
        const report = await deps.insights.build(range, projectId);
        await postInsights(args.client, channelId, report, deps.view, log);
      },
    });
  app.command('/insights', (args) => deps.inflight.track(onInsights(args)));
}

/**
 * Posts the report's blocks with its plain `text`; if Slack refuses the blocks (and would
 * take a plain message), the text alone goes out, so the summary is not lost.
 */
async function postInsights(
  client: WebClient,
  channel: string,
  report: InsightsReport,
  view: InsightsView,
  log: Logger,
): Promise<void> {
  const message = insightsMessage(report, view);
  const base = {
    channel,
    text: message.text,
    unfurl_links: false,
    unfurl_media: false,
    metadata: { event_type: INSIGHTS_EVENT, event_payload: { from: report.range.from } },
  };
  try {
    await client.chat.postMessage({ ...base, blocks: message.blocks });
    return;
  } catch (err) {
    const e = toChatError(err);
    if (!e.answered || CANNOT_POST.has(e.code)) throw e;
    log.warn({ err: e, channelId: channel }, 'insights.blocks_refused');
  }
  try {
    await client.chat.postMessage(base);
  } catch (err) {
    throw toChatError(err);
  }
}
