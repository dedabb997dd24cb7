import type { WorkspaceRef } from '../store/types.ts';
import type { ReportPoster } from './ports.ts';
import type { DateRange } from './range.ts';
import type { ReportService } from './service.ts';

/*
 * What a digest is made of (its parts, and the traffic report, the first of them); when and
 * how often it posts, and that it posts once, is ./digest.ts.
 */

/**
 * One part of the digest (the traffic report, the insights section), posted in order: the
 * first is the one message in the channel, the others go in its thread. Each is recognised
 * on its own, so a run that died between two posts the rest, and never one twice.
 */
export interface DigestPart {
  /** Names the part in log lines. */
  name: string;
  /** Names it for people: "the traffic report". */
  label: string;
  /**
   * Whether this part of the period's digest is posted already: in the channel since
   * `sinceMs`, or in the thread `threadTs` when given. Answers where, when it is.
   */
  inChannel(
    channelId: string,
    periodKey: string,
    sinceMs: number,
    threadTs?: string,
  ): Promise<{ ts: string | undefined } | undefined>;
  /**
   * Builds the part for the period; what it returns posts it (in the thread `threadTs` when
   * given) and answers the ts of the message it posted, when known. `retry`: a run of the
   * period failed before this one (a part may then spend less, or give up: DigestGiveUp).
   */
  build(
    range: DateRange,
    periodKey: string,
    attempt?: { retry: boolean },
  ): Promise<(channelId: string, threadTs?: string) => Promise<string | undefined>>;
}

/**
 * The traffic report with its chart and CSV: the digest's first part. Of workspace `ws` and
 * its `project` in distributed mode; the configured project's otherwise.
 */
export function trafficPart(
  reports: Pick<ReportService, 'build'>,
  poster: ReportPoster,
  { ws, project }: { ws?: WorkspaceRef; project?: string } = {},
): DigestPart {
  const fileKey = (periodKey: string) => `digest-${periodKey}`;
  return {
    name: 'traffic',
    label: 'the traffic report',
    inChannel: (channelId, key, sinceMs) => poster.findReport(channelId, fileKey(key), sinceMs),
    async build(range, key) {
      const report = await reports.build(range, project, ws);
      return (channelId) =>
        poster.postReport(channelId, report, {
          title: 'Weekly docs traffic',
          fileKey: fileKey(key),
        });
    },
  };
}
