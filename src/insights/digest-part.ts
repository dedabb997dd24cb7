import { ApiError, type ApiErrorKind } from '../api/errors.ts';
import type { Logger } from '../log.ts';
import type { DigestPart } from '../reports/digest.ts';
import { describeReportFailure } from '../reports/failures.ts';
import type { GapBook } from './gap-book.ts';
import type { InsightsPoster } from './ports.ts';
import type { InsightsService } from './service.ts';

/**
 * Failures that waiting will not fix (the key, the plan, the request): the section says so
 * in its place rather than the digest retrying for a day. Anything else (the API down, the
 * budget spent, a rate limit) fails the run, which the digest tries again later: the traffic
 * report already posted is recognised and not posted twice.
 */
const LASTING: ReadonlySet<ApiErrorKind> = new Set([
  'unauthorized',
  'forbidden',
  'not_found',
  'invalid_request',
]);

/**
 * The digest's insights section, in the traffic report's thread: top gaps and disliked pages,
 * as the team left them (`gaps`: drafted ones with their job and "did it work?", dismissed
 * ones left out), read when the section is posted.
 */
export function insightsPart(
  insights: Pick<InsightsService, 'build'>,
  poster: InsightsPoster,
  log: Logger,
  gaps?: Pick<GapBook, 'resolve'>,
): DigestPart {
  const key = (periodKey: string) => `digest-${periodKey}`;
  return {
    name: 'insights',
    label: 'the insights section',
    async inChannel(channelId, periodKey, sinceMs, threadTs) {
      const has = await poster.has(channelId, key(periodKey), sinceMs, threadTs);
      return has ? { ts: undefined } : undefined;
    },
    async build(range, periodKey) {
      try {
        const report = await insights.build(range);
        return async (channelId, threadTs) => {
          const listing = await gaps?.resolve(report);
          await poster.post(channelId, report, {
            key: key(periodKey),
            title: 'Weekly docs insights',
            section: true,
            threadTs,
            ...(listing ? { gaps: listing } : {}),
          });
          return undefined;
        };
      } catch (err) {
        if (!(err instanceof ApiError && LASTING.has(err.kind))) throw err;
        log.warn({ err, period: periodKey }, 'digest.insights_unavailable');
        const text = `Weekly docs insights could not be built. ${describeReportFailure(err)}`;
        return async (channelId, threadTs) => {
          await poster.postUnavailable(channelId, text, { key: key(periodKey), threadTs });
          return undefined;
        };
      }
    },
  };
}
