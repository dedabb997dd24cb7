import type { z } from 'zod';
import type { Budget } from './budget.ts';
import type { ApiClientOptions, Call, ReadOptions, VisitorsQuery, WriteOptions } from './call.ts';
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
  ReadOptions,
  RetryOptions,
  VisitorsQuery,
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

  /** `signal` bounds the call (its retries included); see `getJob`. */
  createJob(prompt: string, opts: WriteOptions = {}): Promise<Job> {
    const project = opts.project ?? this.#opts.projectId;
    return this.#call({
      signal: opts.signal,
      operation: 'job.create',
      method: 'POST',
      project,
      path: this.#agentPath(project, '/job'),
      body: { prompt },
      schema: Job,
      what: 'The project',
      budget: this.#agentBudget(project),
      slot: opts.slot,
    });
  }

  sendMessage(jobId: string, prompt: string, opts: WriteOptions = {}): Promise<Job> {
    const project = opts.project ?? this.#opts.projectId;
    return this.#call({
      signal: opts.signal,
      operation: 'job.message',
      method: 'POST',
      project,
      path: this.#agentPath(project, `/job/${encodeURIComponent(jobId)}/message`),
      body: { prompt },
      schema: Job,
      what: 'The job',
      budget: this.#agentBudget(project),
      slot: opts.slot,
    });
  }

  /**
   * `signal` lets a shutdown cut an in-flight poll and its retries short; the poller asks
   * for a single short attempt (`retries`, `timeoutMs`): its schedule is the retry.
   */
  getJob(jobId: string, opts: ReadOptions = {}): Promise<Job> {
    const project = opts.project ?? this.#opts.projectId;
    return this.#call({
      project,
      signal: opts.signal,
      retries: opts.retries,
      timeoutMs: opts.timeoutMs,
      operation: 'job.get',
      method: 'GET',
      path: this.#agentPath(project, `/job/${encodeURIComponent(jobId)}`),
      schema: Job,
      what: 'The job',
      budget: undefined,
    });
  }

  getVisitorsPage(q: VisitorsQuery): Promise<VisitorsPage> {
    const project = q.project ?? this.#opts.projectId;
    return this.#call({
      operation: 'visitors.get',
      method: 'GET',
      project,
      path: `/v1/analytics/${encodeURIComponent(project)}/visitors`,
      query: { dateFrom: q.dateFrom, dateTo: q.dateTo, limit: q.limit, offset: q.offset },
      schema: VisitorsPageSchema,
      what: 'The project',
      budget: this.#opts.budgets?.analytics,
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

  /** An analytics read: the query's project (else the configured one), the shared budget. */
  #analytics<Q extends { project?: string | undefined }, S extends z.ZodType>(
    build: (project: string, q: Q) => insights.AnalyticsRead<S>,
    q: Q,
    opts: ReadOptions,
  ): Promise<z.infer<S>> {
    const project = q.project ?? opts.project ?? this.#opts.projectId;
    return this.#call({
      ...build(project, q),
      method: 'GET',
      project,
      what: 'The project',
      budget: this.#opts.budgets?.analytics,
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
    await this.#call({
      operation: o.apiKey === undefined ? 'project.check' : 'project.check_key',
      method: 'GET',
      project: projectId,
      apiKey: o.apiKey,
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
    const project = projectId ?? this.#opts.projectId;
    const today = new Date();
    const yesterday = new Date(today.getTime() - 86_400_000);
    await this.#call({
      operation: 'access.check',
      method: 'GET',
      project,
      path: `/v1/analytics/${encodeURIComponent(project)}/visitors`,
      query: {
        dateFrom: yesterday.toISOString().slice(0, 10),
        dateTo: today.toISOString().slice(0, 10),
        limit: 1,
        offset: 0,
      },
      schema: VisitorsPageSchema,
      what: 'The project',
      budget: this.#opts.budgets?.analytics,
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

  #call<S extends z.ZodType>(call: Call<S>): Promise<z.infer<S>> {
    return this.#transport.call(call);
  }
}
