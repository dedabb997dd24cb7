/**
 * Expected failures of the service, as typed errors. `kind` is what callers switch on;
 * `applied` says whether the request may have taken effect, which is what decides whether
 * a non-idempotent POST may be sent again.
 *
 * Messages are written for the person in Slack and never contain the API key.
 */

export type ApiErrorKind =
  | 'invalid_request'
  | 'unauthorized'
  | 'forbidden'
  | 'not_found'
  | 'rate_limited'
  | 'unavailable'
  | 'timeout'
  | 'malformed'
  | 'budget_exhausted'
  | 'stopped';

/** 'no': the service provably did not act on it. 'unknown': it may have. */
export type Applied = 'no' | 'unknown';

export abstract class ApiError extends Error {
  abstract readonly kind: ApiErrorKind;
  readonly operation: string;
  readonly status: number | undefined;
  readonly applied: Applied;

  constructor(message: string, opts: { operation: string; status?: number; applied: Applied }) {
    super(message);
    this.name = new.target.name;
    this.operation = opts.operation;
    this.status = opts.status;
    this.applied = opts.applied;
  }
}

export class InvalidRequest extends ApiError {
  readonly kind = 'invalid_request';
  readonly details: string[];
  constructor(operation: string, error: string, details: string[]) {
    const suffix = details.length > 0 ? `: ${details.join('; ')}` : '';
    super(`The service rejected the request (${error}${suffix})`, {
      operation,
      status: 400,
      applied: 'no',
    });
    this.details = details;
  }
}

export class Unauthorized extends ApiError {
  readonly kind = 'unauthorized';
  constructor(operation: string) {
    super(
      'The Mintlify API key was rejected: it is wrong or has expired (check MINTLIFY_API_KEY)',
      {
        operation,
        status: 401,
        applied: 'no',
      },
    );
  }
}

export class Forbidden extends ApiError {
  readonly kind = 'forbidden';
  constructor(operation: string) {
    super(
      'The Mintlify API refused this action: the API key may be read-only, or this server is not on the IP allowlist',
      { operation, status: 403, applied: 'no' },
    );
  }
}

export class NotFound extends ApiError {
  readonly kind = 'not_found';
  constructor(operation: string, what: string) {
    super(`${what} was not found`, { operation, status: 404, applied: 'no' });
  }
}

export class RateLimited extends ApiError {
  readonly kind = 'rate_limited';
  readonly retryAfterMs: number;
  constructor(operation: string, retryAfterMs: number) {
    super(
      `The Mintlify API is rate limiting us; try again in ${Math.ceil(retryAfterMs / 1000)} s`,
      {
        operation,
        status: 429,
        applied: 'no',
      },
    );
    this.retryAfterMs = retryAfterMs;
  }
}

export class Unavailable extends ApiError {
  readonly kind = 'unavailable';
  /** Connection refused: the request never reached the service. */
  readonly refused: boolean;
  constructor(operation: string, opts: { status?: number; refused?: boolean; cause?: string }) {
    const what = opts.status
      ? `answered ${opts.status}`
      : opts.refused
        ? 'could not be reached'
        : `dropped the connection${opts.cause ? ` (${opts.cause})` : ''}`;
    super(`The Mintlify API ${what}`, {
      operation,
      ...(opts.status === undefined ? {} : { status: opts.status }),
      applied: opts.refused ? 'no' : 'unknown',
    });
    this.refused = opts.refused ?? false;
  }
}

export class Timeout extends ApiError {
  readonly kind = 'timeout';
  constructor(operation: string, timeoutMs: number) {
    super(`The Mintlify API did not answer within ${timeoutMs} ms`, {
      operation,
      applied: 'unknown',
    });
  }
}

export class MalformedResponse extends ApiError {
  readonly kind = 'malformed';
  constructor(operation: string, status: number, problem: string) {
    super(`The Mintlify API sent an answer we could not read (${problem})`, {
      operation,
      status,
      applied: 'unknown',
    });
  }
}

/** Our own client-side budget is spent: nothing was sent. */
export class BudgetExhausted extends ApiError {
  readonly kind = 'budget_exhausted';
  readonly retryAt: Date;
  /** Uses the budget allows per window, when known. */
  readonly limit: number | undefined;
  constructor(operation: string, what: string, retryAt: Date, limit?: number) {
    super(`${what} is used up; the next slot opens at ${retryAt.toISOString()}`, {
      operation,
      applied: 'no',
    });
    this.retryAt = retryAt;
    this.limit = limit;
  }
}

/**
 * The bot is shutting down and cut the call short: between attempts (nothing more was
 * sent) or with a request on the wire (it may have taken effect).
 */
export class Stopped extends ApiError {
  readonly kind = 'stopped';
  constructor(operation: string, applied: Applied) {
    super(
      applied === 'no'
        ? 'The bot was shutting down, so the request was not sent'
        : 'The bot shut down before the Mintlify API answered',
      { operation, applied },
    );
  }
}

/**
 * The one table of what is retried. GETs are safe to repeat; POSTs are
 * repeated only when the service provably did not act on the request.
 */
export function isRetryable(err: unknown, method: 'GET' | 'POST'): boolean {
  if (err instanceof RateLimited) return true;
  if (err instanceof Unavailable) return method === 'GET' || err.refused;
  if (err instanceof Timeout) return method === 'GET';
  return false;
}
