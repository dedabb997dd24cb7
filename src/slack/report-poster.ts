import type { WebClient } from '@slack/web-api';
import { renderVisitorsChart } from '../reports/chart.ts';
import { pagesCsv } from '../reports/csv.ts';
import type { ReportPoster } from '../reports/ports.ts';
import { formatRange } from '../reports/range.ts';
import type { Report } from '../reports/service.ts';
import { toChatError } from './chat.ts';
import { reportMessage } from './report-blocks.ts';

const fileName = (fileKey: string, ext: string) => `docs-traffic-${fileKey}.${ext}`;

/**
 * Posts a report as one message: the report's blocks with the chart (shown inline) and
 * the CSV attached, through the files upload v2 flow (files.getUploadURLExternal, upload,
 * files.completeUploadExternal with `blocks`). One message, so the chart sits with the
 * numbers it illustrates.
 */
export function createSlackReportPoster(client: WebClient): ReportPoster {
  return {
    async postReport(channelId: string, report: Report, { title, fileKey }) {
      const message = reportMessage(report, title);
      const period = formatRange(report.range);
      const chart = renderVisitorsChart(
        report.points.map((p) => ({ label: p.label, human: p.human, ai: p.ai })),
        { title: `${title}: unique visitors`, subtitle: `${period} · humans vs AI agents` },
      );
      const csv = pagesCsv(report.rows, report.previousRows, report.scan.previous.complete);
      try {
        await client.filesUploadV2({
          channel_id: channelId,
          blocks: message.blocks,
          file_uploads: [
            {
              file: chart.png,
              filename: fileName(fileKey, 'png'),
              title: `${title}: ${period}`,
              alt_text: `Daily unique visitors, humans vs AI agents, ${period}`,
            },
            {
              file: Buffer.from(csv, 'utf8'),
              filename: fileName(fileKey, 'csv'),
              title: `Pages scanned, ${period} (CSV)`,
            },
          ],
        });
      } catch (err) {
        throw toChatError(err);
      }
    },

    async hasReport(channelId: string, fileKey: string, sinceMs: number) {
      const wanted = fileName(fileKey, 'png');
      let cursor: string | undefined;
      do {
        const res = await client.conversations
          .history({
            channel: channelId,
            oldest: String(sinceMs / 1000),
            limit: 200,
            ...(cursor ? { cursor } : {}),
          })
          .catch((err: unknown) => {
            throw toChatError(err);
          });
        if (res.messages?.some((m) => m.files?.some((f) => f.name === wanted))) return true;
        cursor = res.response_metadata?.next_cursor || undefined;
      } while (cursor);
      return false;
    },
  };
}
