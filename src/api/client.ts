import { setTimeout as delay } from 'node:timers/promises';
import pRetry from 'p-retry';
import type { z } from 'zod';
import type { Logger } from '../log.ts';
import { errorFor, networkError, parseAnswer } from './answers.ts';
import type { Budget, BudgetSlot } from './budget.ts';
import {
  type ApiClientOptions,
  type ApiMetrics,
  appliedBy,
  type Call,
  DEFAULT_RETRY,
  DEFAULT_TIMEOUT_MS,
  neverSent,
  type ReadOptions,
  type RetryOptions,
  type VisitorsQuery,
  type WriteOptions,
} from './call.ts';
import { ApiError, isRetryable, RateLimited, Stopped } from './errors.ts';
import * as insights from './insights-calls.ts';
import { Job, type VisitorsPage, VisitorsPage as VisitorsPageSchema } from './schemas.ts';
import { timeoutSignal } from './timeout.ts';

export { parseRetryAfter } from './answers.ts';
export type {
  ApiClientOptions,
  ApiMetrics,
  ReadOptions,
  RetryOptions,
  VisitorsQuery,
  WriteOptions,
} from './call.ts';

/** The service's client: every response validated, typed errors, one retry policy. */
export class ApiClient {
  readonly #opts: ApiClientOptions;
  readonly #retry: RetryOptions;
  readonly #timeoutMs: number;
  readonly #log: Logger;
  readonly #metrics: ApiMetrics | undefined;
  /** Aborted by `stop()`: cuts every wait and request short, now and for later calls. */
  readonly #stopping = new AbortController();

  constructor(opts: ApiClientOptions) {
    this.#opts = opts;
    this.#retry = { ...DEFAULT_RETRY, ...opts.retry };
    this.#timeoutMs = opts.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.#log = opts.log;
    this.#metrics = opts.metrics;
  }

  /**
   * Makes every call in flight fail fast with `Stopped` (a shutdown must not wait out a
   * Retry-After or a slow answer), and every later call too.
   */
  stop(): void {
    this.#stopping.abort();
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

  async #call<S extends z.ZodType>(call: Call<S>): Promise<z.infer<S>> {
    const retry = {
      ...this.#retry,
      ...(call.retries === undefined ? {} : { retries: call.retries }),
    };
    const stop = this.#stopping.signal;
    const signal = call.signal ? AbortSignal.any([call.signal, stop]) : stop;
    const waitable = (err: unknown) =>
      isRetryable(err, call.method) &&
      !(err instanceof RateLimited && err.retryAfterMs > retry.maxRetryAfterMs);
    // The last attempt's error says whether a request cut short by a stop may have acted;
    // an answer that arrived just as the stop came still stands (p-retry would drop it).
    let last: unknown;
    let answer: { value: z.infer<S> } | undefined;
    try {
      return await pRetry(
        () =>
          this.#once(call).then(
            (value) => {
              answer = { value };
              return value;
            },
            (err: unknown) => {
              last = err;
              throw err;
            },
          ),
        {
          retries: retry.retries,
          minTimeout: retry.minDelayMs,
          maxTimeout: retry.maxDelayMs,
          randomize: true,
          signal,
          shouldRetry: ({ error }) => waitable(error),
          onFailedAttempt: ({ error, attemptNumber, retriesLeft, retryDelay }) =>
            this.#failedAttempt(call, signal, {
              error,
              attempt: attemptNumber,
              willRetry: retriesLeft > 0 && waitable(error),
              retryDelay,
            }),
        },
      );
    } catch (err) {
      if (answer) return answer.value;
      if (stop.aborted) throw new Stopped(call.operation, appliedBy(last));
      throw err;
    }
  }

  async #failedAttempt(
    call: Call<z.ZodType>,
    signal: AbortSignal,
    a: { error: Error; attempt: number; willRetry: boolean; retryDelay: number },
  ): Promise<void> {
    const { error, willRetry } = a;
    this.#metrics?.apiError(call.operation, error instanceof ApiError ? error.kind : 'unexpected');
    this.#log.warn(
      { operation: call.operation, attempt: a.attempt, willRetry, err: error },
      'api.failed',
    );
    // Honour Retry-After: p-retry's own delay is only the jittered back-off. Abortable,
    // like p-retry's, so that neither holds a shutdown.
    if (willRetry && error instanceof RateLimited && error.retryAfterMs > a.retryDelay) {
      await delay(error.retryAfterMs - a.retryDelay, undefined, { signal }).catch(() => {
        throw signal.reason;
      });
    }
  }

  async #once<S extends z.ZodType>(call: Call<S>): Promise<z.infer<S>> {
    let slot: BudgetSlot | undefined;
    if (call.budget) slot = await call.budget.take(call.operation);
    try {
      return await this.#send(call);
    } catch (err) {
      // The service counts every request that reaches it, refused or not (a 400, a 401 or
      // a 429 used a slot there too); only one that never got there is given back.
      if (slot && neverSent(err)) await slot.release();
      throw err;
    }
  }

  async #send<S extends z.ZodType>(call: Call<S>): Promise<z.infer<S>> {
    // Stopped while taking a budget slot: nothing goes out, and the slot is given back.
    if (this.#stopping.signal.aborted) throw new Stopped(call.operation, 'no');
    const url = new URL(this.#opts.baseUrl + call.path);
    for (const [k, v] of Object.entries(call.query ?? {})) url.searchParams.set(k, String(v));
    const timeoutMs = Math.min(call.timeoutMs ?? this.#timeoutMs, this.#timeoutMs);
    const timeout = timeoutSignal(timeoutMs);
    try {
      return await this.#exchange(call, url, timeout.signal, timeoutMs);
    } finally {
      timeout.clear();
    }
  }

  async #exchange<S extends z.ZodType>(
    call: Call<S>,
    url: URL,
    timeout: AbortSignal,
    timeoutMs: number,
  ): Promise<z.infer<S>> {
    const started = performance.now();
    let res: Response;
    try {
      res = await fetch(url, {
        method: call.method,
        headers: {
          authorization: `Bearer ${this.#opts.projectKeys?.[call.project] ?? this.#opts.apiKey}`,
          accept: 'application/json',
          ...(call.body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        ...(call.body === undefined ? {} : { body: JSON.stringify(call.body) }),
        signal: AbortSignal.any([
          this.#stopping.signal,
          ...(call.signal ? [call.signal] : []),
          timeout,
        ]),
      });
    } catch (err) {
      throw this.#sendFailure(call, err, timeoutMs);
    }
    let text: string;
    try {
      text = await res.text();
    } catch (err) {
      throw this.#sendFailure(call, err, timeoutMs);
    }
    const durationMs = Math.round(performance.now() - started);
    this.#log.debug({ operation: call.operation, status: res.status, durationMs }, 'api.response');
    if (!res.ok) throw errorFor(call.operation, call.what, res, text);
    return parseAnswer(call.operation, res.status, text, call.schema);
  }

  /** Why a request on the wire ended without an answer. */
  #sendFailure(call: Call<z.ZodType>, err: unknown, timeoutMs: number): unknown {
    if (this.#stopping.signal.aborted) return new Stopped(call.operation, 'unknown');
    if (call.signal?.aborted) return call.signal.reason;
    return networkError(call.operation, err, timeoutMs);
  }
}
