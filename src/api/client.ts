import pRetry from 'p-retry';
import type { z } from 'zod';
import type { Logger } from '../log.ts';
import type { Budget, BudgetSlot } from './budget.ts';
import {
  type ApiError,
  Forbidden,
  InvalidRequest,
  isRetryable,
  MalformedResponse,
  NotFound,
  RateLimited,
  Timeout,
  Unauthorized,
  Unavailable,
} from './errors.ts';
import {
  describeDetail,
  ErrorBody,
  Job,
  type VisitorsPage,
  VisitorsPage as VisitorsPageSchema,
} from './schemas.ts';

export interface RetryOptions {
  /** Attempts after the first. */
  retries: number;
  minDelayMs: number;
  maxDelayMs: number;
  /** A Retry-After longer than this is not waited out: the caller is told instead. */
  maxRetryAfterMs: number;
}

export interface ApiClientOptions {
  baseUrl: string;
  apiKey: string;
  projectId: string;
  log: Logger;
  timeoutMs?: number;
  retry?: Partial<RetryOptions>;
  budgets?: { agent?: Budget; analytics?: Budget };
}

export interface VisitorsQuery {
  dateFrom: string;
  dateTo: string;
  limit: number;
  offset: number;
}

const DEFAULT_RETRY: RetryOptions = {
  retries: 3,
  minDelayMs: 300,
  maxDelayMs: 5_000,
  maxRetryAfterMs: 15_000,
};
const DEFAULT_TIMEOUT_MS = 15_000;
/** Used when a 429 carries no Retry-After. */
const DEFAULT_RETRY_AFTER_MS = 30_000;

type Method = 'GET' | 'POST';

interface Call<S extends z.ZodType> {
  operation: string;
  method: Method;
  path: string;
  query?: Record<string, string | number>;
  body?: unknown;
  schema: S;
  /** Noun for a 404 message. */
  what: string;
  budget: Budget | undefined;
  signal?: AbortSignal | undefined;
}

/** The service's client: every response validated, typed errors, one retry policy. */
export class ApiClient {
  readonly #opts: ApiClientOptions;
  readonly #retry: RetryOptions;
  readonly #timeoutMs: number;
  readonly #log: Logger;

  constructor(opts: ApiClientOptions) {
    this.#opts = opts;
    this.#retry = { ...DEFAULT_RETRY, ...opts.retry };
    this.#timeoutMs = opts.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.#log = opts.log;
  }

  #agentPath(suffix: string): string {
    return `/v2/agent/${encodeURIComponent(this.#opts.projectId)}${suffix}`;
  }

  /** `signal` bounds the call (its retries included); see `getJob`. */
  createJob(prompt: string, opts: { signal?: AbortSignal } = {}): Promise<Job> {
    return this.#call({
      signal: opts.signal,
      operation: 'job.create',
      method: 'POST',
      path: this.#agentPath('/job'),
      body: { prompt },
      schema: Job,
      what: 'The project',
      budget: this.#opts.budgets?.agent,
    });
  }

  sendMessage(jobId: string, prompt: string, opts: { signal?: AbortSignal } = {}): Promise<Job> {
    return this.#call({
      signal: opts.signal,
      operation: 'job.message',
      method: 'POST',
      path: this.#agentPath(`/job/${encodeURIComponent(jobId)}/message`),
      body: { prompt },
      schema: Job,
      what: 'The job',
      budget: this.#opts.budgets?.agent,
    });
  }

  /** `signal` lets a shutdown cut an in-flight poll and its retries short. */
  getJob(jobId: string, opts: { signal?: AbortSignal } = {}): Promise<Job> {
    return this.#call({
      signal: opts.signal,
      operation: 'job.get',
      method: 'GET',
      path: this.#agentPath(`/job/${encodeURIComponent(jobId)}`),
      schema: Job,
      what: 'The job',
      budget: undefined,
    });
  }

  getVisitorsPage(q: VisitorsQuery): Promise<VisitorsPage> {
    return this.#call({
      operation: 'visitors.get',
      method: 'GET',
      path: `/v1/analytics/${encodeURIComponent(this.#opts.projectId)}/visitors`,
      query: { dateFrom: q.dateFrom, dateTo: q.dateTo, limit: q.limit, offset: q.offset },
      schema: VisitorsPageSchema,
      what: 'The project',
      budget: this.#opts.budgets?.analytics,
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
    const retry = this.#retry;
    const waitable = (err: unknown) =>
      isRetryable(err, call.method) &&
      !(err instanceof RateLimited && err.retryAfterMs > retry.maxRetryAfterMs);
    return pRetry(() => this.#once(call), {
      retries: retry.retries,
      minTimeout: retry.minDelayMs,
      maxTimeout: retry.maxDelayMs,
      randomize: true,
      ...(call.signal ? { signal: call.signal } : {}),
      shouldRetry: ({ error }) => waitable(error),
      onFailedAttempt: async ({ error, attemptNumber, retriesLeft, retryDelay }) => {
        const willRetry = retriesLeft > 0 && waitable(error);
        this.#log.warn(
          { operation: call.operation, attempt: attemptNumber, willRetry, err: error },
          'api.failed',
        );
        // Honour Retry-After: p-retry's own delay is only the jittered back-off.
        if (willRetry && error instanceof RateLimited && error.retryAfterMs > retryDelay) {
          await sleep(error.retryAfterMs - retryDelay);
        }
      },
    });
  }

  async #once<S extends z.ZodType>(call: Call<S>): Promise<z.infer<S>> {
    let slot: BudgetSlot | undefined;
    if (call.budget) slot = await call.budget.take(call.operation);
    try {
      return await this.#send(call);
    } catch (err) {
      // The service counts every request that reaches it, refused or not (a 400, a 401 or
      // a 429 used a slot there too); only one that never got there is given back.
      if (slot && err instanceof Unavailable && err.refused) await slot.release();
      throw err;
    }
  }

  async #send<S extends z.ZodType>(call: Call<S>): Promise<z.infer<S>> {
    const url = new URL(this.#opts.baseUrl + call.path);
    for (const [k, v] of Object.entries(call.query ?? {})) url.searchParams.set(k, String(v));
    const started = performance.now();
    let res: Response;
    try {
      res = await fetch(url, {
        method: call.method,
        headers: {
          authorization: `Bearer ${this.#opts.apiKey}`,
          accept: 'application/json',
          ...(call.body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        ...(call.body === undefined ? {} : { body: JSON.stringify(call.body) }),
        signal: call.signal
          ? AbortSignal.any([call.signal, AbortSignal.timeout(this.#timeoutMs)])
          : AbortSignal.timeout(this.#timeoutMs),
      });
    } catch (err) {
      if (call.signal?.aborted) throw call.signal.reason;
      throw networkError(call.operation, err, this.#timeoutMs);
    }
    let text: string;
    try {
      text = await res.text();
    } catch (err) {
      throw networkError(call.operation, err, this.#timeoutMs);
    }
    const durationMs = Math.round(performance.now() - started);
    this.#log.debug({ operation: call.operation, status: res.status, durationMs }, 'api.response');
    if (!res.ok) throw errorFor(call, res, text);
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      throw new MalformedResponse(call.operation, res.status, 'the body is not JSON');
    }
    const parsed = call.schema.safeParse(json);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      const where = issue?.path.length ? issue.path.join('.') : 'body';
      throw new MalformedResponse(
        call.operation,
        res.status,
        `${where}: ${issue?.message ?? 'unexpected shape'}`,
      );
    }
    return parsed.data;
  }
}

function errorFor(call: Call<z.ZodType>, res: Response, text: string): ApiError {
  const op = call.operation;
  switch (res.status) {
    case 400: {
      const body = parseErrorBody(text);
      return new InvalidRequest(
        op,
        body?.error ?? body?.message ?? 'invalid request',
        (body?.details ?? []).map(describeDetail),
      );
    }
    case 401:
      return new Unauthorized(op);
    case 403:
      return new Forbidden(op);
    case 404:
      return new NotFound(op, call.what);
    case 429:
      return new RateLimited(op, parseRetryAfter(res.headers.get('retry-after')));
    default:
      if (res.status >= 500) return new Unavailable(op, { status: res.status });
      return new MalformedResponse(op, res.status, `unexpected HTTP status ${res.status}`);
  }
}

function parseErrorBody(text: string) {
  try {
    const r = ErrorBody.safeParse(JSON.parse(text));
    return r.success ? r.data : undefined;
  } catch {
    return undefined;
  }
}

/** Retry-After is either seconds or an HTTP date (RFC 9110 §10.2.3). */
export function parseRetryAfter(header: string | null, nowMs = Date.now()): number {
  if (!header) return DEFAULT_RETRY_AFTER_MS;
  const seconds = Number(header);
  if (Number.isFinite(seconds) && seconds >= 0) return Math.round(seconds * 1000);
  const at = Date.parse(header);
  return Number.isNaN(at) ? DEFAULT_RETRY_AFTER_MS : Math.max(0, at - nowMs);
}

function networkError(operation: string, err: unknown, timeoutMs: number): ApiError {
  if (err instanceof Error && (err.name === 'TimeoutError' || err.name === 'AbortError')) {
    return new Timeout(operation, timeoutMs);
  }
  const code = errorCode(err);
  return new Unavailable(operation, {
    refused: code === 'ECONNREFUSED',
    cause: code ?? 'network error',
  });
}

function errorCode(err: unknown): string | undefined {
  for (let e: unknown = err, depth = 0; e && depth < 4; depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string') return code;
    e = (e as { cause?: unknown }).cause;
  }
  return undefined;
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
