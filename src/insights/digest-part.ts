import type { Budget } from '../api/budget.ts';
import { ApiError, type ApiErrorKind } from '../api/errors.ts';
import type { Logger } from '../log.ts';
import type { DigestPart } from '../reports/digest-parts.ts';
import { DigestGiveUp } from '../reports/digest-retry.ts';
import { describeReportFailure } from '../reports/failures.ts';
import type { DateRange } from '../reports/range.ts';
import { SINGLE_WORKSPACE } from '../store/scope.ts';
import type { WorkspaceRef } from '../store/types.ts';
import type { GapBook } from './gap-book.ts';
import { CORE } from './plan.ts';
import type { InsightsPoster } from './ports.ts';
import type { InsightsReport, InsightsService } from './service.ts';

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

/** Analytics requests the section's retries may spend in any 24 hours, by default. */
export const DIGEST_RETRY_REQUESTS = 40;

/**
 * What the section's retries may spend: a sliding 24-hour budget in the database (shared by
 * restarts and replicas), `limit` requests in all.
 */
export type RetryAllowance = Pick<Budget, 'take' | 'remaining'> & { limit: number };

/**
 * The digest's insights section, in the traffic report's thread: top gaps and disliked pages.
 *
 * A first build reads as `/insights` does. A retry (a run of the period failed before) is
 * held to `retries`: it plans no more requests than the allowance has left, takes one use of
 * it before each request, and asks each page once (the digest's backoff is its retry). With
 * fewer left than the 3 core requests, the section gives up for the day (DigestGiveUp): the
 * digest says so once, where the section would have been.
 *
 * The gaps are shown as the team left them (`gaps`: drafted ones with their job and "did it
 * work?", dismissed ones left out), read when the section is posted.
 */
export function insightsPart(
  insights: Pick<InsightsService, 'build'>,
  poster: InsightsPoster,
  log: Logger,
  {
    retries,
    gaps,
    ws,
    project,
  }: {
    retries?: RetryAllowance;
    gaps?: Pick<GapBook, 'resolve'>;
    /** The workspace whose digest this is (its cache, vectors and gaps), and its project. */
    ws?: WorkspaceRef;
    project?: string;
  } = {},
): DigestPart {
  const own = ws ? { workspace: ws } : {};
  async function report(range: DateRange, retry: boolean): Promise<InsightsReport> {
    if (!retry || !retries) return insights.build(range, project, own);
    const left = await retries.remaining();
    if (left < CORE.length) {
      throw new DigestGiveUp(
        `Its retries used the ${retries.limit} analytics requests they may spend in a day, so I stopped trying.`,
      );
    }
    log.info({ left }, 'digest.insights_retry');
    return insights.build(range, project, {
      ...own,
      maxRequests: left,
      meter: retries,
      singleAttempt: true,
    });
  }

  const key = (periodKey: string) => `digest-${periodKey}`;
  return {
    name: 'insights',
    label: 'the insights section',
    async inChannel(channelId, periodKey, sinceMs, threadTs) {
      const has = await poster.has(channelId, key(periodKey), sinceMs, threadTs);
      return has ? { ts: undefined } : undefined;
    },
    async build(range, periodKey, attempt) {
      try {
        const built = await report(range, attempt?.retry === true);
        return async (channelId, threadTs) => {
          const listing = await gaps?.resolve(ws ?? SINGLE_WORKSPACE, built, project);
          await poster.post(channelId, built, {
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
