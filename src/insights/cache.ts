import { z } from 'zod';
import type { Logger } from '../log.ts';
import type { Store, WorkspaceRef } from '../store/types.ts';
import type { InsightsReport } from './report.ts';

/**
 * Where reports of settled periods are kept, so that restarts and other replicas answer them
 * without spending the analytics budget again. A cache: a failure to read or write it is
 * logged and the report is built (or posted) all the same. Each workspace's apart (`ws`: its
 * state scope, src/store/scope.ts).
 */
export interface InsightsCache {
  get(ws: WorkspaceRef, key: string): Promise<InsightsReport | undefined>;
  put(ws: WorkspaceRef, key: string, report: InsightsReport, expiresAt: number): Promise<void>;
}

/**
 * Bump when InsightsReport changes shape or meaning: bodies written under another version are
 * ignored. 2: reader text masked (src/redact-pii.ts), `ctr` read in either unit, typing
 * prefixes folded; a version-1 body may hold a reader's address or key verbatim. 3: one item
 * per need (`gaps`), handled feedback left out.
 */
export const CACHE_VERSION = 3;

/** What is checked of a stored body before it is trusted as a report of this version. */
const Envelope = z.object({
  v: z.literal(CACHE_VERSION),
  // Loose: the fields not checked here are kept as they were written.
  report: z.looseObject({
    range: z.looseObject({ from: z.string(), to: z.string(), timeZone: z.string() }),
    counts: z.looseObject({ searches: z.number().nullable(), questions: z.number().nullable() }),
    questionGaps: z.array(z.unknown()),
    searchGaps: z.array(z.unknown()),
    disliked: z.array(z.unknown()),
    gaps: z.array(z.unknown()),
    topSearches: z.array(z.unknown()),
    closed: z.literal(true),
  }),
});

/** The insights cache in the bot's database (table report_cache, keys `insights:…`). */
export function storeInsightsCache(
  store: Pick<Store, 'cachedReport' | 'cacheReport'>,
  log: Logger,
  now: () => number = Date.now,
): InsightsCache {
  const keyOf = (key: string) => `insights:${key}`;
  return {
    async get(ws, key) {
      try {
        const body = await store.cachedReport(ws, keyOf(key), now());
        if (body === undefined) return undefined;
        const parsed = Envelope.safeParse(JSON.parse(body));
        if (parsed.success) return parsed.data.report as unknown as InsightsReport;
        log.info({ key }, 'insights.cache_stale_shape');
      } catch (err) {
        log.warn({ err, key }, 'insights.cache_unread');
      }
      return undefined;
    },
    async put(ws, key, report, expiresAt) {
      const body = JSON.stringify({ v: CACHE_VERSION, report });
      await store
        .cacheReport(ws, keyOf(key), body, expiresAt, now())
        .catch((err: unknown) => log.warn({ err, key }, 'insights.cache_unwritten'));
    },
  };
}
