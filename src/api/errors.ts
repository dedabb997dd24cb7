/**
 * Expected failures of the service, as typed errors. `kind` is what callers switch on;
 * `applied` says whether the request may have taken effect, which is what decides whether
 * a non-idempotent POST may be sent again.
 *
 * Messages are written for the person in Slack and never contain the API key. They name
 * the service by the operation's first word: `embeddings.create` is the team's embeddings
 * endpoint (src/api/embeddings.ts), anything else the Mintlify API.
 */

const SERVICES: Readonly<Record<string, { name: string; keyVariable: string }>> = {
  embeddings: { name: 'The embeddings endpoint', keyVariable: 'INSIGHTS_EMBEDDINGS_KEY' },
};
const MINTLIFY = { name: 'The Mintlify API', keyVariable: 'MINTLIFY_API_KEY' };

/** The service an operation talks to, as messages name it. */
export const serviceOf = (operation: string) => SERVICES[operation.split('.')[0] ?? ''] ?? MINTLIFY;

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
  | 'not_connected'
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
  /** `workspace`: the key a workspace connected (distributed mode), not one of the environment. */
  constructor(operation: string, key: 'environment' | 'workspace' = 'environment') {
    const { name, keyVariable } = serviceOf(operation);
    const who =
      name === MINTLIFY.name ? 'The Mintlify API key was rejected' : `${name} rejected the key`;
    const check =
      key === 'workspace'
        ? "a workspace admin replaces it from Docs Agent's App Home"
        : `check ${keyVariable}`;
    super(`${who}: it is wrong or has expired (${check})`, {
      operation,
      status: 401,
      applied: 'no',
    });
  }
}

export class Forbidden extends ApiError {
  readonly kind = 'forbidden';
  constructor(operation: string) {
    super(
      serviceOf(operation) === MINTLIFY
        ? 'The Mintlify API refused this action: the API key may be read-only, or this server is not on the IP allowlist'
        : `${serviceOf(operation).name} refused the request (403): check the key's permissions`,
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
      `${serviceOf(operation).name} is rate limiting us; try again in ${Math.ceil(retryAfterMs / 1000)} s`,
      { operation, status: 429, applied: 'no' },
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
    super(`${serviceOf(operation).name} ${what}`, {
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
    super(`${serviceOf(operation).name} did not answer within ${timeoutMs} ms`, {
      operation,
      applied: 'unknown',
    });
  }
}

export class MalformedResponse extends ApiError {
  readonly kind = 'malformed';
  constructor(operation: string, status: number, problem: string) {
    super(`${serviceOf(operation).name} sent an answer we could not read (${problem})`, {
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
 * Distributed mode: the workspace the call is for has no docs project connected (never, or
 * not any more), so nothing was sent and no key was used.
 */
export class NotConnected extends ApiError {
  readonly kind = 'not_connected';
  constructor(operation: string) {
    super(
      "This workspace has no docs project connected: a workspace admin connects one from Docs Agent's App Home",
      { operation, applied: 'no' },
    );
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
        : `The bot shut down before ${serviceOf(operation).name.replace(/^The/, 'the')} answered`,
      { operation, applied },
    );
  }
}

/**
 * What a request does to the service: a GET reads; a POST acts (starts a job, sends a
 * message); a `computing POST` only computes an answer from its body (embeddings), and acts
 * on nothing, so it may be sent again like a GET.
 */
export type RequestKind = 'GET' | 'POST' | 'computing POST';

/**
 * The one table of what is retried. GETs and computing POSTs are safe to repeat; other
 * POSTs are repeated only when the service provably did not act on the request.
 */
export function isRetryable(err: unknown, kind: RequestKind): boolean {
  const repeatable = kind === 'GET' || kind === 'computing POST';
  if (err instanceof RateLimited) return true;
  if (err instanceof Unavailable) return repeatable || err.refused;
  if (err instanceof Timeout) return repeatable;
  return false;
}
