import type { WebClient } from '@slack/web-api';
import type { Logger } from '../log.ts';
import { renderVisitorsChart } from '../reports/chart.ts';
import { pagesCsvSteps } from '../reports/csv.ts';
import type { ReportPoster } from '../reports/ports.ts';
import { formatRange } from '../reports/range.ts';
import type { Report } from '../reports/service.ts';
import { inTurns } from '../reports/turns.ts';
import { toChatError } from './chat.ts';
import { historyHas, markedWith } from './history.ts';
import { postMarked } from './marked-message.ts';
import { type ReportView, reportMessage } from './report-blocks.ts';
import { plainReport } from './report-plain.ts';

const fileName = (fileKey: string, ext: string) => `docs-traffic-${fileKey}.${ext}`;
/** Marks a report's message, so it can be recognised in the channel later. */
const REPORT_EVENT = 'docs_traffic_report';

/**
 * Posts a report as a message with a plain `text` (notifications and screen readers read
 * it) and the report's blocks, then the chart and the CSV in the channel right under it
 * (files.completeUploadExternal cannot carry `text` with `blocks`: Slack drops the blocks
 * when `initial_comment` is given). If Slack refuses the blocks for any reason, the report
 * goes out as a plain message instead, so the numbers are never lost with the blocks.
 */
export function createSlackReportPoster(
  client: WebClient,
  log: Logger,
  view: ReportView = {},
): ReportPoster {
  function postMessage(channelId: string, report: Report, title: string, fileKey: string) {
    const message = reportMessage(report, title, view);
    return postMarked(client, log, {
      channel: channelId,
      text: message.text,
      blocks: message.blocks,
      plain: plainReport(report, title, view),
      metadata: { event_type: REPORT_EVENT, event_payload: { file_key: fileKey } },
      refusedEvent: 'report.blocks_refused',
    });
  }

  return {
    async postReport(channelId: string, report: Report, { title, fileKey }) {
      await postMessage(channelId, report, title, fileKey);
      const period = formatRange(report.range);
      const chart = renderVisitorsChart(
        report.points.map((p) => ({ label: p.label, human: p.human, ai: p.ai })),
        {
          title: `${title}: unique visitors`,
          subtitle: `${period} (${report.range.timeZone}) · humans vs AI agents`,
        },
      );
      // In steps: 50,000 rows of CSV would hold the event loop for a while.
      const csv = await inTurns(
        pagesCsvSteps(report.rows, report.previousRows, report.scan.previous.complete),
      );
      try {
        await client.filesUploadV2({
          channel_id: channelId,
          initial_comment: `Chart and every page scanned: ${title}, ${period}.`,
          file_uploads: [
            {
              file: chart.png,
              filename: fileName(fileKey, 'png'),
              title: `${title}: ${period}`,
              alt_text: `Daily unique visitors, humans vs AI agents, ${period} (${report.range.timeZone})`,
            },
            {
              file: Buffer.from(csv, 'utf8'),
              filename: fileName(fileKey, 'csv'),
              title: `Pages scanned, ${period} (CSV)`,
            },
          ],
        });
      } catch (err) {
        // The numbers are posted; a missing chart is not worth a second report.
        log.warn({ err: toChatError(err), channelId }, 'report.files_failed');
      }
    },

    async postNotice(channelId: string, text: string) {
      try {
        await client.chat.postMessage({ channel: channelId, text, unfurl_links: false });
      } catch (err) {
        throw toChatError(err);
      }
    },

    hasReport(channelId: string, fileKey: string, sinceMs: number) {
      const wanted = fileName(fileKey, 'png');
      return historyHas(
        client,
        channelId,
        sinceMs,
        (m) =>
          m.files?.some((f) => f.name === wanted) === true ||
          markedWith(m, REPORT_EVENT)?.file_key === fileKey,
      );
    },
  };
}
