import type { WebClient } from '@slack/web-api';
import type { Logger } from '../log.ts';
import { renderVisitorsChart } from '../reports/chart.ts';
import { pagesCsv } from '../reports/csv.ts';
import type { ReportPoster } from '../reports/ports.ts';
import { formatRange } from '../reports/range.ts';
import type { Report } from '../reports/service.ts';
import { toChatError } from './chat.ts';
import { reportMessage } from './report-blocks.ts';

const fileName = (fileKey: string, ext: string) => `docs-traffic-${fileKey}.${ext}`;
/** Marks a report posted the fallback way, so it can be recognised in the channel later. */
const REPORT_EVENT = 'docs_traffic_report';
/** What Slack answers when it will not take these blocks on a file message. */
const REJECTED_BLOCKS = new Set(['invalid_blocks', 'invalid_arguments', 'invalid_blocks_format']);

/**
 * Posts a report as one message: the report's blocks with the chart (shown inline) and
 * the CSV attached, through the files upload v2 flow (files.getUploadURLExternal, upload,
 * files.completeUploadExternal with `blocks`). One message, so the chart sits with the
 * numbers it illustrates.
 */
export function createSlackReportPoster(client: WebClient, log: Logger): ReportPoster {
  return {
    async postReport(channelId: string, report: Report, { title, fileKey }) {
      const message = reportMessage(report, title);
      const period = formatRange(report.range);
      const chart = renderVisitorsChart(
        report.points.map((p) => ({ label: p.label, human: p.human, ai: p.ai })),
        { title: `${title}: unique visitors`, subtitle: `${period} · humans vs AI agents` },
      );
      const csv = pagesCsv(report.rows, report.previousRows, report.scan.previous.complete);
      const files = [
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
      ];
      try {
        await client.filesUploadV2({
          channel_id: channelId,
          blocks: message.blocks,
          file_uploads: files,
        });
        return;
      } catch (err) {
        const e = toChatError(err);
        if (!REJECTED_BLOCKS.has(e.code)) throw e;
        log.warn({ err: e, channelId }, 'report.blocks_with_files_refused');
      }
      // Slack refused the blocks on the file message: post the report as a message of
      // its own (with a text fallback and a marker for hasReport) and attach the chart and
      // CSV in its thread.
      try {
        const posted = await client.chat.postMessage({
          channel: channelId,
          text: message.text,
          blocks: message.blocks,
          unfurl_links: false,
          metadata: { event_type: REPORT_EVENT, event_payload: { file_key: fileKey } },
        });
        await client.filesUploadV2({
          channel_id: channelId,
          ...(posted.ts ? { thread_ts: posted.ts } : {}),
          initial_comment: `Chart and every page scanned for ${period}.`,
          file_uploads: files,
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
            include_all_metadata: true,
            ...(cursor ? { cursor } : {}),
          })
          .catch((err: unknown) => {
            throw toChatError(err);
          });
        const posted = res.messages?.some(
          (m) =>
            m.files?.some((f) => f.name === wanted) ||
            (m.metadata?.event_type === REPORT_EVENT &&
              (m.metadata.event_payload as Record<string, unknown> | undefined)?.file_key ===
                fileKey),
        );
        if (posted) return true;
        cursor = res.response_metadata?.next_cursor || undefined;
      } while (cursor);
      return false;
    },
  };
}
