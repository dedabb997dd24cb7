import { ApiError, BudgetExhausted, InvalidRequest, RateLimited } from '../api/errors.ts';

function clock(at: Date): string {
  return `${at.toISOString().slice(11, 16)} UTC`;
}

/** What to tell the person when a report could not be built. Nothing partial is posted. */
export function describeReportFailure(err: unknown): string {
  if (err instanceof BudgetExhausted) {
    return `The analytics budget (100 requests per hour for your organisation) is used up, so I can't build this report now. It refreshes at ${clock(err.retryAt)}.`;
  }
  if (err instanceof RateLimited) {
    return `The Mintlify API is rate limiting analytics requests. Try again after ${clock(new Date(Date.now() + err.retryAfterMs))}.`;
  }
  if (err instanceof InvalidRequest) {
    return `The Mintlify API rejected the report request: ${err.details.join('; ') || err.message}.`;
  }
  if (err instanceof ApiError)
    return `I couldn't build the report: ${err.message}. Please try again later.`;
  return "I couldn't build the report because of an unexpected error. It was logged; please try again.";
}
