import type { z } from 'zod';
import type { Logger } from '../log.ts';
import type { Budget, BudgetSlot } from './budget.ts';
import { ApiError, type ApiErrorKind, type Applied, Stopped, Unavailable } from './errors.ts';

// The client's options, one call's shape and defaults, and the small pure rules about a
// call's outcome; the client itself (src/api/client.ts) re-exports the public types.

export interface RetryOptions {
  /** Attempts after the first. */
  retries: number;
  minDelayMs: number;
  maxDelayMs: number;
  /** A Retry-After longer than this is not waited out: the caller is told instead. */
  maxRetryAfterMs: number;
}

/** What the client counts about itself; the Prometheus side is in src/app/metrics.ts. */
export interface ApiMetrics {
  /** One failed attempt, retried or not; `unexpected` is an error that is not an ApiError (a bug). */
  apiError(operation: string, kind: ApiErrorKind | 'unexpected'): void;
}

/** What the transport needs of a client's options: the service, its key, the retry policy. */
export type TransportOptions = Pick<
  ApiClientOptions,
  'baseUrl' | 'apiKey' | 'projectKeys' | 'log' | 'timeoutMs' | 'retry' | 'metrics'
>;

export interface ApiClientOptions {
  baseUrl: string;
  /**
   * The organisation's admin key: used for every project without a key of its own. Empty:
   * no Authorization header (a local embeddings server may want none).
   */
  apiKey: string;
  /** The project a call is for when it names none. */
  projectId: string;
  /** Keys of single projects (MINTLIFY_PROJECT_KEYS), by project id. */
  projectKeys?: Readonly<Record<string, string>>;
  /**
   * Distributed mode: each workspace's connected project and key. Every call then names its
   * workspace and goes with that workspace's key, to its project unless the call names one;
   * a call for no workspace, or for one with nothing connected, is refused (`NotConnected`)
   * before anything is sent. Unset: the environment's key and project, as always.
   */
  workspaceKeys?: WorkspaceKeys | undefined;
  log: Logger;
  timeoutMs?: number;
  retry?: Partial<RetryOptions>;
  /**
   * The agent budget is per project: one budget, or one for each project id. The analytics
   * budget is per organisation: one budget, or (distributed mode) one for each workspace's
   * organisation, named by its connected project (`WorkspaceCredentials.projectId`).
   */
  budgets?: {
    agent?: Budget | ((projectId: string) => Budget);
    analytics?: Budget | ((organisation: string) => Budget);
  };
  metrics?: ApiMetrics;
}

/** A workspace of the distributed mode, as its docs connection is keyed. */
export interface ApiWorkspace {
  teamId: string;
  enterpriseId?: string | null | undefined;
}

/** What a workspace connected: its project, and the admin key that opens it. */
export interface WorkspaceCredentials {
  projectId: string;
  /** Never logged, never in an error. */
  apiKey: string;
}

/** Where each workspace's key comes from (src/workspaces/docs-keys.ts). */
export interface WorkspaceKeys {
  /** Undefined: the workspace has no docs project connected. */
  credentialsFor(ws: ApiWorkspace): Promise<WorkspaceCredentials | undefined>;
  /** The service refused the workspace's key (401, 403): it is read again next time. */
  refused(ws: ApiWorkspace): void;
}

export interface VisitorsQuery {
  /** The configured project when unset (distributed mode: the workspace's). */
  project?: string | undefined;
  /** Distributed mode: the workspace the report is for (its key, its organisation's budget). */
  workspace?: ApiWorkspace | undefined;
  dateFrom: string;
  dateTo: string;
  limit: number;
  offset: number;
}

export const DEFAULT_RETRY: RetryOptions = {
  retries: 3,
  minDelayMs: 300,
  maxDelayMs: 5_000,
  maxRetryAfterMs: 15_000,
};
export const DEFAULT_TIMEOUT_MS = 15_000;

type Method = 'GET' | 'POST';

export interface Call<S extends z.ZodType> {
  operation: string;
  method: Method;
  /**
   * A POST that only computes its answer (embeddings) and acts on nothing: the retry table
   * (errors.ts `isRetryable`) repeats it like a GET.
   */
  computes?: boolean;
  path: string;
  /** The project the call is for: it picks the key. */
  project: string;
  /**
   * This call's own key instead of the project's: a key being checked before it is saved
   * (a workspace connecting its docs). Never logged, never in an error.
   */
  apiKey?: string | undefined;
  query?: Record<string, string | number>;
  body?: unknown;
  schema: S;
  /** Noun for a 404 message. */
  what: string;
  budget: Budget | undefined;
  /** Taken ahead for the first attempt (`WriteOptions.slot`); later attempts take their own. */
  slot?: BudgetSlot | undefined;
  signal?: AbortSignal | undefined;
  /** This call's own attempts after the first, and timeout per attempt (at most the client's). */
  retries?: number | undefined;
  timeoutMs?: number | undefined;
}

/** A read's own limits: a caller that retries on its own schedule asks for one short attempt. */
export interface ReadOptions {
  signal?: AbortSignal;
  /** The configured project when unset (distributed mode: the workspace's). */
  project?: string | undefined;
  /** Distributed mode: the workspace the call is for (required there). */
  workspace?: ApiWorkspace | undefined;
  /** Attempts after the first (default: the client's retry table). */
  retries?: number;
  /** Per attempt; never longer than the client's own timeout. */
  timeoutMs?: number;
}

/** A write's own limits. */
export interface WriteOptions {
  signal?: AbortSignal;
  /** The configured project when unset (distributed mode: the workspace's). */
  project?: string | undefined;
  /** Distributed mode: the workspace the call is for (required there). */
  workspace?: ApiWorkspace | undefined;
  /**
   * A budget slot the caller took ahead (a reservation): the first attempt uses it instead
   * of taking one, so the request is counted once; released if it never reaches the service.
   */
  slot?: BudgetSlot | undefined;
}

/**
 * Whether a call cut short by a stop may have acted: only if its last attempt may have (a
 * POST is not sent again after an attempt that may have acted, so earlier ones did not).
 */
export function appliedBy(lastAttempt: unknown): Applied {
  if (lastAttempt === undefined) return 'no';
  return lastAttempt instanceof ApiError ? lastAttempt.applied : 'unknown';
}

/** The request never reached the service: the connection was refused, or a stop came first. */
export function neverSent(err: unknown): boolean {
  return (
    (err instanceof Unavailable && err.refused) || (err instanceof Stopped && err.applied === 'no')
  );
}
