import { setTimeout as sleep } from 'node:timers/promises';
import type { WebClient } from '@slack/web-api';
import type { Logger } from '../log.ts';
import { renderVisitorsChart } from '../reports/chart.ts';
import { pagesCsvSteps } from '../reports/csv.ts';
import type { ReportPoster } from '../reports/ports.ts';
import { formatRange } from '../reports/range.ts';
import type { Report } from '../reports/service.ts';
import { inTurns } from '../reports/turns.ts';
import { toChatError } from './chat.ts';
import { historyFind, markedWith } from './history.ts';
import { postMarked } from './marked-message.ts';
import { type ReportView, reportDetails, reportHeadline } from './report-blocks.ts';
import { plainReport } from './report-plain.ts';

const fileName = (fileKey: string, ext: string) => `docs-traffic-${fileKey}.${ext}`;
/** Marks a report's headline posted without its chart, so it can be recognised later. */
const REPORT_EVENT = 'docs_traffic_report';
/** Marks the details reply in a report's thread. */
const REPORT_DETAILS_EVENT = 'docs_traffic_details';

/** How long to look for the chart's message: Slack shares an uploaded file asynchronously. */
const SHARE_WAITS_MS = [0, 250, 500, 1_000, 2_000, 4_000];
/** How long to look for a chart whose upload failed without a clear answer. */
const AMBIGUOUS_WAITS_MS = [0, 1_000];

/**
 * Posts a report as ONE message in the channel: the chart with the headline (totals with
 * change) as its comment, which is also what notifications and screen readers read. Top pages,
 * movers and their footnotes, then the CSV of every page, go in that message's thread. If the
 * chart cannot be uploaded, the headline goes out as a plain message (the numbers are never
 * lost with the chart); if Slack refuses the details' blocks, they go out as plain text.
 */
export function createSlackReportPoster(
  client: WebClient,
  log: Logger,
  view: ReportView = {},
): ReportPoster {
  /** The ts of the chart's message, once Slack has shared it in the channel. */
  async function sharedAt(
    channelId: string,
    name: string,
    sinceMs: number,
    waits = SHARE_WAITS_MS,
  ) {
    for (const wait of waits) {
      if (wait) await sleep(wait);
      const found = await historyFind(client, channelId, sinceMs, (m) =>
        Boolean(m.files?.some((f) => f.name === name)),
      );
      if (found?.ts) return found.ts;
    }
    return undefined;
  }

  async function postHeadline(channelId: string, report: Report, title: string, fileKey: string) {
    const period = formatRange(report.range);
    const headline = reportHeadline(report, title);
    const chart = renderVisitorsChart(
      report.points.map((p) => ({ label: p.label, human: p.human, ai: p.ai })),
      {
        title: `${title}: unique visitors`,
        subtitle: `${period} (${report.range.timeZone}) · humans vs AI agents`,
      },
    );
    const since = Date.now() - 60_000;
    const name = fileName(fileKey, 'png');
    try {
      await client.filesUploadV2({
        channel_id: channelId,
        initial_comment: headline,
        file_uploads: [
          {
            file: chart.png,
            filename: name,
            title: `${title}: ${period}`,
            alt_text: `Daily unique visitors, humans vs AI agents, ${period} (${report.range.timeZone})`,
          },
        ],
      });
    } catch (err) {
      log.warn({ err: toChatError(err), channelId }, 'report.files_failed');
      // Not answered is not refused: the chart may have been shared all the same, and a
      // second headline would be the report twice. A look that fails counts as not found.
      const shared = await sharedAt(channelId, name, since, AMBIGUOUS_WAITS_MS).catch(
        () => undefined,
      );
      if (shared) return shared;
      // The numbers go out without the chart: a missing chart is not worth a lost report.
      return postMarked(client, log, {
        channel: channelId,
        text: headline,
        metadata: { event_type: REPORT_EVENT, event_payload: { file_key: fileKey } },
        refusedEvent: 'report.blocks_refused',
      });
    }
    const ts = await sharedAt(channelId, name, since);
    if (!ts) log.warn({ channelId, fileKey }, 'report.thread_unknown');
    return ts;
  }

  return {
    async postReport(channelId: string, report: Report, { title, fileKey }) {
      const ts = await postHeadline(channelId, report, title, fileKey);
      // Without the headline's ts (Slack never showed the share), the details still go out.
      const details = reportDetails(report, title, view);
      await postMarked(client, log, {
        channel: channelId,
        threadTs: ts,
        text: details.text,
        blocks: details.blocks,
        plain: plainReport(report, title, view),
        metadata: { event_type: REPORT_DETAILS_EVENT, event_payload: { file_key: fileKey } },
        refusedEvent: 'report.blocks_refused',
      });
      // In steps: 50,000 rows of CSV would hold the event loop for a while.
      const csv = await inTurns(
        pagesCsvSteps(report.rows, report.previousRows, report.scan.previous.complete),
      );
      const period = formatRange(report.range);
      try {
        await client.filesUploadV2({
          channel_id: channelId,
          ...(ts ? { thread_ts: ts } : {}),
          initial_comment: `Every page scanned, ${period} (CSV).`,
          file_uploads: [
            {
              file: Buffer.from(csv, 'utf8'),
              filename: fileName(fileKey, 'csv'),
              title: `Pages scanned, ${period} (CSV)`,
            },
          ],
        });
      } catch (err) {
        // The numbers are posted; a missing CSV is not worth a second report.
        log.warn({ err: toChatError(err), channelId }, 'report.csv_failed');
      }
      return ts;
    },

    async postNotice(channelId: string, text: string, threadTs?: string) {
      try {
        await client.chat.postMessage({
          channel: channelId,
          ...(threadTs ? { thread_ts: threadTs } : {}),
          text,
          unfurl_links: false,
        });
      } catch (err) {
        throw toChatError(err);
      }
    },

    async findReport(channelId: string, fileKey: string, sinceMs: number) {
      const wanted = fileName(fileKey, 'png');
      const found = await historyFind(
        client,
        channelId,
        sinceMs,
        (m) =>
          m.files?.some((f) => f.name === wanted) === true ||
          markedWith(m, REPORT_EVENT)?.file_key === fileKey,
      );
      return found ? { ts: found.ts } : undefined;
    },
  };
}
