import type { Report } from './service.ts';

/** How a report reaches a channel. The Slack implementation is in `src/slack/`. */
export interface ReportPoster {
  /**
   * Posts the report with its chart and CSV. `fileKey` names the attached files, so that a
   * post can be recognised in the channel later.
   */
  postReport(
    channelId: string,
    report: Report,
    opts: { title: string; fileKey: string },
  ): Promise<void>;
  /** Whether a report with this `fileKey` was posted in the channel since `sinceMs`. */
  hasReport(channelId: string, fileKey: string, sinceMs: number): Promise<boolean>;
  /** A plain message in the channel (the digest saying what it could not post). */
  postNotice(channelId: string, text: string): Promise<void>;
}
