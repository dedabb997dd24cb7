import { ApiError, Timeout } from '../api/errors.ts';
import { timeoutSignal } from '../api/timeout.ts';

/**
 * Runs an API call that must end within `ms` (the lease that covers the work), and within a
 * stop when `stop` is given. A call cut short by the deadline fails as a `Timeout`, so the
 * callers treat it as what it is: the request may or may not have taken effect.
 */
export async function withDeadline<T>(
  operation: string,
  ms: number,
  call: (signal: AbortSignal) => Promise<T>,
  stop?: AbortSignal,
): Promise<T> {
  const deadline = timeoutSignal(ms);
  try {
    return await call(stop ? AbortSignal.any([stop, deadline.signal]) : deadline.signal);
  } catch (err) {
    if (
      deadline.signal.aborted &&
      !(err instanceof ApiError && err.applied === 'no') &&
      !stop?.aborted
    )
      throw new Timeout(operation, ms);
    throw err;
  } finally {
    deadline.clear();
  }
}
