import type { WebClient } from '@slack/web-api';
import { type Budget, slidingWindowBudget } from '../api/budget.ts';
import type { ApiClient } from '../api/client.ts';
import { EmbeddingsClient } from '../api/embeddings.ts';
import type { Config } from '../config/config.ts';
import { defaultProjectOf } from '../config/distribution.ts';
import { storeInsightsCache } from '../insights/cache.ts';
import { DIGEST_RETRY_REQUESTS, insightsPart } from '../insights/digest-part.ts';
import { createGapBook } from '../insights/gap-book.ts';
import { createInsightsService } from '../insights/service.ts';
import type { Logger } from '../log.ts';
import { startDigest, trafficPart } from '../reports/digest.ts';
import { keepingHeadlines } from '../reports/headline.ts';
import { createReportService } from '../reports/service.ts';
import { createSlackInsightsPoster } from '../slack/insights-poster.ts';
import { createSlackReportPoster } from '../slack/report-poster.ts';
import type { ClientSource } from '../slack/workspace-clients.ts';
import type { Store, WorkspaceRef } from '../store/types.ts';

/**
 * The reports side of the composition root: the traffic and insights services, their Slack
 * posters, and the weekly digest made of both (the traffic report, then the insights section).
 */
export function createReporting(deps: {
  config: Config;
  api: ApiClient;
  store: Store;
  log: Logger;
  /** The digest's client: the app's own (the digest runs in single-workspace mode only). */
  client: WebClient;
  /** A workspace's own client, for the reports its people ask for. */
  clients: ClientSource;
  /** The shared analytics budget: insights plan their requests within what it has left. */
  analytics: Pick<Budget, 'remaining' | 'status'>;
  /** The database's clock (src/clock.ts): digest claims are judged on it. */
  now: () => number;
  /**
   * Distributed mode: a workspace's organisation's analytics budget (by its connected
   * project), and its own docs site (its settings' `docsBaseUrl`, else DOCS_BASE_URL).
   */
  workspaces?: {
    analyticsFor: (organisation: string) => Pick<Budget, 'remaining' | 'status'>;
    docsBaseUrlOf: (ws: WorkspaceRef) => Promise<string | undefined>;
  };
}) {
  const { config, api, store, log } = deps;
  const docsBaseUrl = config.visitors.docsBaseUrl;
  const reports = keepingHeadlines(
    createReportService({ api, store, log, maxRequests: config.visitors.maxRequests }),
    store,
    log,
  );
  const posterLog = log.child({ component: 'report-poster' });
  const poster = createSlackReportPoster(deps.client, posterLog, { docsBaseUrl });
  /** The poster for a workspace's channels, with its client (its install's token). */
  const siteOf = async (ws: WorkspaceRef) =>
    deps.workspaces ? await deps.workspaces.docsBaseUrlOf(ws) : docsBaseUrl;
  const posterFor = async (ws: WorkspaceRef) =>
    createSlackReportPoster(await deps.clients.clientFor(ws), posterLog, {
      docsBaseUrl: await siteOf(ws),
    });
  // A team's embeddings endpoint, if set: questions grouped by meaning too, vectors cached.
  const endpoint = config.insights.embeddings;
  const embedder = endpoint && embeddingsClient(endpoint, log);
  const insights = createInsightsService({
    api,
    budget: deps.analytics,
    budgetOf: deps.workspaces?.analyticsFor,
    cache: storeInsightsCache(store, log.child({ component: 'insights' })),
    log,
    options: {
      grouping: { threshold: config.insights.similarity, synonyms: config.insights.synonyms },
    },
    embeddings: embedder && { embedder, cache: store },
  });
  // The database's clock, as the job threads it compares claims with are stamped.
  const gapBook = createGapBook({
    store,
    defaultProjectId: defaultProjectOf(config),
    log,
    now: deps.now,
  });
  const insightsLog = log.child({ component: 'insights-poster' });
  const insightsView = { docsBaseUrl, drafts: true };
  const insightsPoster = createSlackInsightsPoster(deps.client, insightsLog, insightsView);
  const insightsPosterFor = async (ws: WorkspaceRef) =>
    createSlackInsightsPoster(await deps.clients.clientFor(ws), insightsLog, {
      ...insightsView,
      docsBaseUrl: await siteOf(ws),
    });

  /** The weekly digest in DIGEST_CHANNEL, if it is set; returns its stop. */
  function startWeeklyDigest(
    owner: string,
    opts: {
      staleClaimMs?: number;
      retryMs?: number;
      catchUpMs?: number;
      /** The insights section's retry allowance, in analytics requests a day. */
      retryRequests?: number;
    } = {},
    /** The digest's own store: a background loop's, bounded by a deadline. */
    loopStore: Store = store,
  ): (() => void) | undefined {
    const channelId = config.digest.channel;
    if (!channelId) return undefined;
    const { retryRequests = DIGEST_RETRY_REQUESTS, ...timing } = opts;
    const retries = {
      limit: retryRequests,
      ...slidingWindowBudget(loopStore, {
        key: `digest-retry-requests:${channelId}`,
        limit: retryRequests,
        windowMs: 24 * 3_600_000,
        description: "The insights section's retry allowance",
        now: deps.now,
      }),
    };
    const digest = startDigest({
      store: loopStore,
      log,
      owner,
      channelId,
      notice: (channel, text, threadTs) => poster.postNotice(channel, text, threadTs),
      parts: [
        trafficPart(reports, poster),
        insightsPart(insights, insightsPoster, log.child({ component: 'digest' }), {
          retries,
          gaps: gapBook,
        }),
      ],
      cron: config.digest.cron,
      timeZone: config.digest.timeZone,
      now: deps.now,
      ...timing,
    });
    return () => digest.stop();
  }

  return {
    reports,
    posterFor,
    insights,
    insightsPosterFor,
    gapBook,
    startWeeklyDigest,
    stop: () => embedder?.stop(),
  };
}

/** The client of INSIGHTS_EMBEDDINGS_URL: no budget of Mintlify's is spent on it. */
export function embeddingsClient(
  endpoint: NonNullable<Config['insights']['embeddings']>,
  log: Logger,
): EmbeddingsClient {
  return new EmbeddingsClient({
    baseUrl: endpoint.url,
    apiKey: endpoint.key,
    model: endpoint.model,
    log: log.child({ component: 'embeddings' }),
  });
}

export type Reporting = ReturnType<typeof createReporting>;
