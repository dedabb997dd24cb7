import { setTimeout as delay } from 'node:timers/promises';
import pRetry from 'p-retry';
import type { z } from 'zod';
import type { Logger } from '../log.ts';
import { errorFor, networkError, parseAnswer } from './answers.ts';
import type { BudgetSlot } from './budget.ts';
import {
  type ApiMetrics,
  appliedBy,
  type Call,
  DEFAULT_RETRY,
  DEFAULT_TIMEOUT_MS,
  neverSent,
  type RetryOptions,
  type TransportOptions,
} from './call.ts';
import { ApiError, isRetryable, RateLimited, Stopped } from './errors.ts';
import { timeoutSignal } from './timeout.ts';

/**
 * How a `Call` reaches the service: a budget slot taken first (given back if the request
 * never left), the one retry policy (p-retry, honouring Retry-After), a timeout per attempt,
 * the key of the call's project, and the answer turned into a validated value or a typed
 * error. `stop()` cuts every wait and request short, now and for later calls.
 */
export class Transport {
  readonly #opts: TransportOptions;
  readonly #retry: RetryOptions;
  readonly #timeoutMs: number;
  readonly #log: Logger;
  readonly #metrics: ApiMetrics | undefined;
  readonly #stopping = new AbortController();

  constructor(opts: TransportOptions) {
    this.#opts = opts;
    this.#retry = { ...DEFAULT_RETRY, ...opts.retry };
    this.#timeoutMs = opts.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.#log = opts.log;
    this.#metrics = opts.metrics;
  }

  stop(): void {
    this.#stopping.abort();
  }

  async call<S extends z.ZodType>(call: Call<S>): Promise<z.infer<S>> {
    const retry = {
      ...this.#retry,
      ...(call.retries === undefined ? {} : { retries: call.retries }),
    };
    const stop = this.#stopping.signal;
    const signal = call.signal ? AbortSignal.any([call.signal, stop]) : stop;
    const waitable = (err: unknown) =>
      isRetryable(err, call.computes ? 'computing POST' : call.method) &&
      !(err instanceof RateLimited && err.retryAfterMs > retry.maxRetryAfterMs);
    // The last attempt's error says whether a request cut short by a stop may have acted;
    // an answer that arrived just as the stop came still stands (p-retry would drop it).
    let last: unknown;
    let answer: { value: z.infer<S> } | undefined;
    // A slot reserved by the caller counts the first attempt; each later one takes its own.
    let reserved = call.slot;
    try {
      return await pRetry(
        () => {
          const slot = reserved;
          reserved = undefined;
          return this.#once(call, slot).then(
            (value) => {
              answer = { value };
              return value;
            },
            (err: unknown) => {
              last = err;
              throw err;
            },
          );
        },
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
      // Stopped before the first attempt: the reserved slot was never used.
      if (reserved)
        await reserved
          .release()
          .catch((e: unknown) => this.#log.warn({ err: e }, 'api.slot_release_failed'));
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

  async #once<S extends z.ZodType>(
    call: Call<S>,
    reserved: BudgetSlot | undefined,
  ): Promise<z.infer<S>> {
    let slot = reserved;
    if (!slot && call.budget) slot = await call.budget.take(call.operation);
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
    const key = call.apiKey ?? this.#opts.projectKeys?.[call.project] ?? this.#opts.apiKey;
    let res: Response;
    try {
      res = await fetch(url, {
        method: call.method,
        headers: {
          ...(key === '' ? {} : { authorization: `Bearer ${key}` }),
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
