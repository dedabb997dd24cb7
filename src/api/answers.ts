import type { z } from 'zod';
import {
  type ApiError,
  Forbidden,
  InvalidRequest,
  MalformedResponse,
  NotFound,
  RateLimited,
  Timeout,
  Unauthorized,
  Unavailable,
} from './errors.ts';
import { describeDetail, ErrorBody } from './schemas.ts';

/** How the service's answers (or their absence) become values or typed errors. */

/** Used when a 429 carries no Retry-After. */
const DEFAULT_RETRY_AFTER_MS = 30_000;

/** A 2xx body, validated: anything that does not match is an error, never a half-read value. */
export function parseAnswer<S extends z.ZodType>(
  operation: string,
  status: number,
  text: string,
  schema: S,
): z.infer<S> {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new MalformedResponse(operation, status, 'the body is not JSON');
  }
  const parsed = schema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue?.path.length ? issue.path.join('.') : 'body';
    throw new MalformedResponse(
      operation,
      status,
      `${where}: ${issue?.message ?? 'unexpected shape'}`,
    );
  }
  return parsed.data;
}

export function errorFor(op: string, what: string, res: Response, text: string): ApiError {
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
      return new NotFound(op, what);
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

export function networkError(operation: string, err: unknown, timeoutMs: number): ApiError {
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
