import type { WebClient } from '@slack/web-api';
import type { Budget } from '../api/budget.ts';
import type { ApiClient } from '../api/client.ts';
import { EmbeddingsClient } from '../api/embeddings.ts';
import type { Config } from '../config/config.ts';
import { defaultProjectOf } from '../config/distribution.ts';
import { storeInsightsCache } from '../insights/cache.ts';
import { createGapBook } from '../insights/gap-book.ts';
import { createInsightsService } from '../insights/service.ts';
import type { Logger } from '../log.ts';
import { keepingHeadlines } from '../reports/headline.ts';
import { createReportService } from '../reports/service.ts';
import { startWorkspaceDigests } from '../reports/workspace-digests.ts';
import { createSlackInsightsPoster } from '../slack/insights-poster.ts';
import { createSlackReportPoster } from '../slack/report-poster.ts';
import type { ClientSource } from '../slack/workspace-clients.ts';
import { SINGLE_WORKSPACE, scopeFor } from '../store/scope.ts';
import type { Store, WorkspaceRef } from '../store/types.ts';
import type { WorkspaceDigest } from '../workspaces/docs-admin.ts';
import {
  type DigestOptions,
  lazyInsightsPoster,
  lazyReportPoster,
  startOneDigest,
} from './digests.ts';

/**
 * The reports side of the composition root: the traffic and insights services, their Slack
 * posters, and the weekly digest made of both (the traffic report, then the insights section).
 */
export function createReporting(deps: {
  config: Config;
  api: ApiClient;
  store: Store;
  log: Logger;
  /** The single-workspace digest's client: the app's own. */
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
  /** Distributed mode: the connected workspaces' digests, as their settings say. */
  workspaceDigests?: (() => Promise<WorkspaceDigest[]>) | undefined;
}) {
  const { config, api, store, log } = deps;
  const docsBaseUrl = config.visitors.docsBaseUrl;
  // Whose state a request's workspace reads and writes: its own in distributed mode.
  const distributed = config.distribution !== undefined;
  const scope = scopeFor(distributed);
  const reports = keepingHeadlines(
    createReportService({ api, store, log, maxRequests: config.visitors.maxRequests, scope }),
    store,
    log,
    scope,
    distributed,
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
    scope,
  });
  // The database's clock, as the job threads it compares claims with are stamped.
  const gapBook = createGapBook({
    store,
    defaultProjectId: defaultProjectOf(config),
    log,
    now: deps.now,
    scope,
  });
  const insightsLog = log.child({ component: 'insights-poster' });
  const insightsView = { docsBaseUrl, drafts: true };
  const insightsPoster = createSlackInsightsPoster(deps.client, insightsLog, insightsView);
  const insightsPosterFor = async (ws: WorkspaceRef) =>
    createSlackInsightsPoster(await deps.clients.clientFor(ws), insightsLog, {
      ...insightsView,
      docsBaseUrl: await siteOf(ws),
    });

  const services = { reports, insights, gapBook, log, now: deps.now };

  /**
   * The weekly digest: in DIGEST_CHANNEL, if it is set; in distributed mode, each connected
   * workspace's in the channel its settings name, on its schedule and in its time zone (the
   * deployment's DIGEST_CRON and DIGEST_TIMEZONE where they say none), posted with its own
   * client. Returns its stop.
   */
  function startWeeklyDigest(
    owner: string,
    opts: DigestOptions = {},
    /** The digest's own store: a background loop's, bounded by a deadline. */
    loopStore: Store = store,
  ): (() => void) | undefined {
    const { cron, timeZone } = config.digest;
    if (config.distribution) {
      const list = deps.workspaceDigests;
      if (!list) return undefined;
      const digests = startWorkspaceDigests({
        log,
        plans: async () =>
          (await list()).map((d) => ({
            ws: d.ws,
            projectId: d.projectId,
            channelId: d.channelId,
            cron: d.cron ?? cron,
            timeZone: d.timeZone ?? timeZone,
          })),
        start: (plan) =>
          startOneDigest(
            services,
            {
              ...plan,
              project: plan.projectId,
              poster: lazyReportPoster(() => posterFor(plan.ws)),
              insightsPoster: lazyInsightsPoster(() => insightsPosterFor(plan.ws)),
            },
            owner,
            opts,
            loopStore,
          ),
        ...(opts.syncMs === undefined ? {} : { everyMs: opts.syncMs }),
      });
      return () => digests.stop();
    }
    const channelId = config.digest.channel;
    if (!channelId) return undefined;
    const single = { ws: SINGLE_WORKSPACE, channelId, cron, timeZone, poster, insightsPoster };
    return startOneDigest(services, single, owner, opts, loopStore);
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
