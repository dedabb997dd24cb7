import {
  ApiError,
  type ApiErrorKind,
  BudgetExhausted,
  InvalidRequest,
  RateLimited,
} from '../api/errors.ts';
import type { StartRetry } from '../store/types.ts';

/** "14:05 UTC": when a slot opens, said the way a person reads it. */
export function clockTime(at: Date): string {
  return `${at.toISOString().slice(11, 16)} UTC`;
}

/**
 * A time as Slack shows it in the reader's own time zone, with "14:05 UTC" as the fallback
 * for clients (and notifications) that cannot.
 */
export function slackTime(atMs: number): string {
  const at = Math.ceil(atMs / 1000);
  return `<!date^${at}^{time}|${clockTime(new Date(at * 1000))}>`;
}

/** The answer when the agent budget is spent before anything was asked of the agent. */
export function budgetSpentText(
  limit: number,
  nextSlotAt: number,
  action: 'create' | 'message',
): string {
  const what = action === 'create' ? 'start a job' : 'send your message to the job';
  return `I did not ${what}: this project's agent budget (${limit} jobs and messages per hour) is used up. The next slot opens at ${slackTime(nextSlotAt)}.`;
}

/**
 * What to tell the person in Slack when a create or follow-up call failed. Says whether
 * the request may have reached the agent, so nobody resends blindly.
 */
export function describeFailure(err: unknown, action: 'create' | 'message'): string {
  const what = action === 'create' ? 'start the job' : 'send your message to the job';
  if (err instanceof BudgetExhausted) {
    return `I did not ${what}: this project's agent budget (100 jobs and messages per hour) is used up. The next slot opens at ${clockTime(err.retryAt)}.`;
  }
  if (err instanceof RateLimited) {
    const at = new Date(Date.now() + err.retryAfterMs);
    return `The Mintlify API is rate limiting us, so I did not ${what}. Try again after ${clockTime(at)}.`;
  }
  if (err instanceof InvalidRequest) {
    return `The Mintlify API rejected the request, so I did not ${what}: ${err.details.join('; ') || err.message}.`;
  }
  if (err instanceof ApiError) {
    if (err.applied === 'no') return `I could not ${what}: ${err.message}.`;
    const check =
      action === 'create'
        ? 'It may have started anyway: check your pull requests before running /agent again.'
        : 'It may have been delivered anyway: check the job before sending it again.';
    return `I could not confirm that I managed to ${what}: ${err.message}. ${check}`;
  }
  return `Something went wrong while trying to ${what}. The error was logged; please try again.`;
}

/**
 * Whether a failed create is worth a Retry button: a reason that goes away by itself (the
 * budget, a rate limit, the service down or slow, a restart). 'safe' when the request
 * provably did not take effect; 'confirm' when it may have, so the button asks the person
 * to check for a job first. Null for reasons a retry cannot fix (a rejected prompt, a bad
 * key, an answer we do not understand, a bug).
 */
export function startRetry(err: unknown): StartRetry | null {
  if (err instanceof BudgetExhausted || err instanceof RateLimited) return 'safe';
  if (!(err instanceof ApiError)) return null;
  if (!RETRYABLE_KINDS.has(err.kind)) return null;
  return err.applied === 'no' ? 'safe' : 'confirm';
}

const RETRYABLE_KINDS: ReadonlySet<ApiErrorKind> = new Set(['unavailable', 'timeout', 'stopped']);
