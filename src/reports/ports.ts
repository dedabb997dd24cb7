import type { Report } from './service.ts';

/** How a report reaches a channel. The Slack implementation is in `src/slack/`. */
export interface ReportPoster {
  /**
   * Posts the report as one message with its chart, the details and the CSV in its thread.
   * `fileKey` names the attached files, so that a post can be recognised in the channel
   * later. Answers the message's ts (undefined when Slack did not show where it is).
   */
  postReport(
    channelId: string,
    report: Report,
    opts: { title: string; fileKey: string },
  ): Promise<string | undefined>;
  /** The report with this `fileKey` posted in the channel since `sinceMs`, if there is one. */
  findReport(
    channelId: string,
    fileKey: string,
    sinceMs: number,
  ): Promise<{ ts: string | undefined } | undefined>;
  /** A plain message (the digest saying what it could not post), in `threadTs` when given. */
  postNotice(channelId: string, text: string, threadTs?: string): Promise<void>;
}
