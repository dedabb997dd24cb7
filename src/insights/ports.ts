import type { GapListing } from './gap-book.ts';
import type { InsightsReport } from './report.ts';

/** How an insights report reaches a channel. The Slack implementation is in `src/slack/`. */
export interface InsightsPoster {
  /**
   * Posts the report with its plain-text fallback. `key` marks the message, so that a post
   * can be recognised in the channel later (the digest's crash check); `section` posts the
   * digest's shorter form, titled `title`, in the thread `threadTs` (the traffic report's).
   * `gaps`: the report's gaps as the team left them (gap-book.ts); without it, listed plainly.
   */
  post(
    channelId: string,
    report: InsightsReport,
    opts?: {
      key?: string;
      title?: string;
      section?: boolean;
      threadTs?: string | undefined;
      gaps?: GapListing;
    },
  ): Promise<void>;
  /** Posts, where the report would have been, why it could not be built. */
  postUnavailable(
    channelId: string,
    text: string,
    opts: { key: string; threadTs?: string | undefined },
  ): Promise<void>;
  /**
   * Whether a message marked with `key` was posted in the channel since `sinceMs`, or as a
   * reply in the thread `threadTs` when given (the channel is read too).
   */
  has(channelId: string, key: string, sinceMs: number, threadTs?: string): Promise<boolean>;
}
