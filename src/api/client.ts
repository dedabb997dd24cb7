import type { z } from 'zod';
import type { Budget } from './budget.ts';
import type {
  ApiClientOptions,
  ApiWorkspace,
  Call,
  ReadOptions,
  VisitorsQuery,
  WriteOptions,
} from './call.ts';
import { Forbidden, NotConnected, Unauthorized } from './errors.ts';
import * as insights from './insights-calls.ts';
import {
  Job,
  ProjectJobs,
  type VisitorsPage,
  VisitorsPage as VisitorsPageSchema,
} from './schemas.ts';
import { Transport } from './transport.ts';

export { parseRetryAfter } from './answers.ts';
export type {
  ApiClientOptions,
  ApiMetrics,
  ApiWorkspace,
  ReadOptions,
  RetryOptions,
  VisitorsQuery,
  WorkspaceCredentials,
  WorkspaceKeys,
  WriteOptions,
} from './call.ts';

/**
 * The service's client: its endpoints, each a `Call` (path, schema, budget); transport.ts
 * sends them: every response validated, typed errors, one retry policy.
 */
export class ApiClient {
  readonly #opts: ApiClientOptions;
  /** Budgets, retries, timeouts and the wire: every endpoint below goes through it. */
  readonly #transport: Transport;

  constructor(opts: ApiClientOptions) {
    this.#opts = opts;
    this.#transport = new Transport(opts);
  }

  /**
   * Makes every call in flight fail fast with `Stopped` (a shutdown must not wait out a
   * Retry-After or a slow answer), and every later call too.
   */
  stop(): void {
    this.#transport.stop();
  }

  #agentPath(project: string, suffix: string): string {
    return `/v2/agent/${encodeURIComponent(project)}${suffix}`;
  }

  #agentBudget(project: string): Budget | undefined {
    const agent = this.#opts.budgets?.agent;
    return typeof agent === 'function' ? agent(project) : agent;
  }

  /** The analytics budget of the call's organisation (distributed mode: its workspace's). */
  #analyticsBudget(scope: Scope): Budget | undefined {
    const analytics = this.#opts.budgets?.analytics;
    if (typeof analytics !== 'function') return analytics;
    return scope.organisation === undefined ? undefined : analytics(scope.organisation);
  }

  /**
   * Where a call goes and with which key: the named project (else the configured one) with
   * the environment's key; in distributed mode the workspace's own key, to the named project
   * or else the one it connected. A workspace with nothing connected, or a call naming no
   * workspace there, is `NotConnected`: nothing is sent, no key is used.
   */
  async #scope(
    operation: string,
    project: string | undefined,
    workspace: ApiWorkspace | undefined,
  ): Promise<Scope> {
    const keys = this.#opts.workspaceKeys;
    if (!keys) return { project: project ?? this.#opts.projectId };
    const c = workspace && (await keys.credentialsFor(workspace));
    if (!c) throw new NotConnected(operation);
    return {
      project: project ?? c.projectId,
      apiKey: c.apiKey,
      organisation: c.projectId,
      workspace,
    };
  }

  /** `signal` bounds the call (its retries included); see `getJob`. */
  async createJob(prompt: string, opts: WriteOptions = {}): Promise<Job> {
    const scope = await this.#scope('job.create', opts.project, opts.workspace);
    return this.#call(scope, {
      signal: opts.signal,
      operation: 'job.create',
      method: 'POST',
      path: this.#agentPath(scope.project, '/job'),
      body: { prompt },
      schema: Job,
      what: 'The project',
      budget: this.#agentBudget(scope.project),
      slot: opts.slot,
    });
  }

  async sendMessage(jobId: string, prompt: string, opts: WriteOptions = {}): Promise<Job> {
    const scope = await this.#scope('job.message', opts.project, opts.workspace);
    return this.#call(scope, {
      signal: opts.signal,
      operation: 'job.message',
      method: 'POST',
      path: this.#agentPath(scope.project, `/job/${encodeURIComponent(jobId)}/message`),
      body: { prompt },
      schema: Job,
      what: 'The job',
      budget: this.#agentBudget(scope.project),
      slot: opts.slot,
    });
  }

  /**
   * `signal` lets a shutdown cut an in-flight poll and its retries short; the poller asks
   * for a single short attempt (`retries`, `timeoutMs`): its schedule is the retry.
   */
  async getJob(jobId: string, opts: ReadOptions = {}): Promise<Job> {
    const scope = await this.#scope('job.get', opts.project, opts.workspace);
    return this.#call(scope, {
      signal: opts.signal,
      retries: opts.retries,
      timeoutMs: opts.timeoutMs,
      operation: 'job.get',
      method: 'GET',
      path: this.#agentPath(scope.project, `/job/${encodeURIComponent(jobId)}`),
      schema: Job,
      what: 'The job',
      budget: undefined,
    });
  }

  async getVisitorsPage(q: VisitorsQuery): Promise<VisitorsPage> {
    const scope = await this.#scope('visitors.get', q.project, q.workspace);
    return this.#call(scope, {
      operation: 'visitors.get',
      method: 'GET',
      path: `/v1/analytics/${encodeURIComponent(scope.project)}/visitors`,
      query: { dateFrom: q.dateFrom, dateTo: q.dateTo, limit: q.limit, offset: q.offset },
      schema: VisitorsPageSchema,
      what: 'The project',
      budget: this.#analyticsBudget(scope),
    });
  }

  /** Search terms, by hits, one cursor page (insights; src/api/insights-calls.ts). */
  getSearchesPage(
    q: insights.InsightsQuery,
    opts: ReadOptions = {},
  ): Promise<insights.SearchesPage> {
    return this.#analytics(insights.searchesRead, q, opts);
  }

  /** Assistant turns, each `answered` or `unanswered`, one cursor page. */
  getAssistantPage(
    q: insights.InsightsQuery,
    opts: ReadOptions = {},
  ): Promise<insights.AssistantPage> {
    return this.#analytics(insights.assistantRead, q, opts);
  }

  /** Feedback entries (thumbs, comments), one cursor page. */
  getFeedbackPage(
    q: insights.FeedbackQuery,
    opts: ReadOptions = {},
  ): Promise<insights.FeedbackPage> {
    return this.#analytics(insights.feedbackRead, q, opts);
  }

  /** Thumbs up/down per page: one answer, no pagination beyond `limit`. */
  getFeedbackByPage(
    q: Omit<insights.FeedbackQuery, 'cursor'>,
    opts: ReadOptions = {},
  ): Promise<insights.FeedbackByPage> {
    return this.#analytics(insights.feedbackByPageRead, q, opts);
  }

  /**
   * An analytics read: the query's project (else the configured one, or the workspace's),
   * the organisation's budget.
   */
  async #analytics<Q extends { project?: string | undefined }, S extends z.ZodType>(
    build: (project: string, q: Q) => insights.AnalyticsRead<S>,
    q: Q,
    opts: ReadOptions,
  ): Promise<z.infer<S>> {
    const read = build('', q);
    const scope = await this.#scope(read.operation, q.project ?? opts.project, opts.workspace);
    return this.#call(scope, {
      ...build(scope.project, q),
      method: 'GET',
      what: 'The project',
      budget: this.#analyticsBudget(scope),
      signal: opts.signal,
      retries: opts.retries,
      timeoutMs: opts.timeoutMs,
    });
  }

  /**
   * Whether the agent API knows a project (for `/agent project <id>`): the one read the admin
   * API scopes to a project alone, its list of jobs (v1, deprecated but documented), asked
   * for one entry. It spends no agent use (the budget counts creates and messages) and no
   * analytics request. An unknown project is `NotFound`; one quick retry, a short timeout:
   * an admin is waiting for the answer.
   */
  checkProject(projectId: string): Promise<void> {
    return this.#readProject(projectId, { retries: 1, timeoutMs: 10_000 });
  }

  /**
   * Whether `apiKey` opens `projectId` (distributed mode: a workspace connecting its docs,
   * before the key is saved): `checkProject`'s read with that key instead of the client's,
   * in one attempt within `timeoutMs`, since a person waits in a modal Slack closes after 3 s.
   * A wrong key is `Unauthorized`, a key for another organisation or project `Forbidden`, an
   * unknown project `NotFound`; no budget is spent.
   */
  checkKey(projectId: string, apiKey: string, timeoutMs: number): Promise<void> {
    return this.#readProject(projectId, { apiKey, retries: 0, timeoutMs });
  }

  /** A project's list of jobs, one entry: the cheapest read the API scopes to a project. */
  async #readProject(
    projectId: string,
    o: { apiKey?: string; retries: number; timeoutMs: number },
  ): Promise<void> {
    const operation = o.apiKey === undefined ? 'project.check' : 'project.check_key';
    // A key being checked is its own scope; otherwise the environment's (refused when none).
    const scope =
      o.apiKey === undefined
        ? await this.#scope(operation, projectId, undefined)
        : { project: projectId, apiKey: o.apiKey };
    await this.#call(scope, {
      operation,
      method: 'GET',
      path: `/v1/agent/${encodeURIComponent(projectId)}/jobs`,
      query: { take: 1 },
      schema: ProjectJobs,
      what: 'The project',
      budget: undefined,
      retries: o.retries,
      timeoutMs: o.timeoutMs,
    });
  }

  /**
   * The doctor's one read: a single row of yesterday's visitors, one attempt. It tells a bad
   * key (401), a refused one (403) and an unknown project (404) apart, and spends no agent
   * use; it does cost one analytics request (of 100 an hour), counted in the shared budget.
   */
  async checkAccess(projectId?: string): Promise<void> {
    const scope = await this.#scope('access.check', projectId, undefined);
    const today = new Date();
    const yesterday = new Date(today.getTime() - 86_400_000);
    await this.#call(scope, {
      operation: 'access.check',
      method: 'GET',
      path: `/v1/analytics/${encodeURIComponent(scope.project)}/visitors`,
      query: {
        dateFrom: yesterday.toISOString().slice(0, 10),
        dateTo: today.toISOString().slice(0, 10),
        limit: 1,
        offset: 0,
      },
      schema: VisitorsPageSchema,
      what: 'The project',
      budget: this.#analyticsBudget(scope),
      retries: 0,
      timeoutMs: 10_000,
    });
  }

  /** Every page of a range: `offset += limit` while `hasMore` (service docs, 4.4). */
  async *visitorPages(q: Omit<VisitorsQuery, 'offset'>): AsyncGenerator<VisitorsPage> {
    let offset = 0;
    for (;;) {
      const page = await this.getVisitorsPage({ ...q, offset });
      yield page;
      if (!page.hasMore) return;
      offset += q.limit;
    }
  }

  /**
   * Sends a call in its scope. A workspace's key the service refuses is read again from the
   * vault next time (it may have been replaced), and a 401 says whose key it was.
   */
  async #call<S extends z.ZodType>(
    scope: Scope,
    call: Omit<Call<S>, 'project' | 'apiKey'>,
  ): Promise<z.infer<S>> {
    try {
      return await this.#transport.call({ ...call, project: scope.project, apiKey: scope.apiKey });
    } catch (err) {
      const ws = scope.workspace;
      if (ws && (err instanceof Unauthorized || err instanceof Forbidden)) {
        this.#opts.workspaceKeys?.refused(ws);
        if (err instanceof Unauthorized) throw new Unauthorized(call.operation, 'workspace');
      }
      throw err;
    }
  }
}

/** Where one call goes: its project, its key (undefined: the environment's), its budgets. */
interface Scope {
  project: string;
  apiKey?: string | undefined;
  /** Names the organisation's analytics budget (distributed mode: the connected project). */
  organisation?: string | undefined;
  workspace?: ApiWorkspace | undefined;
}
