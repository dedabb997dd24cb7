/**
 * `AbortSignal.timeout` (a TimeoutError, a timer that keeps no process alive), but given up
 * as soon as the work ends: a timeout signal lives (with
 * whatever listens to it) until it fires, and thousands of polls a minute would keep
 * thousands of them, each holding its request, alive for the whole deadline.
 */
export function timeoutSignal(ms: number): { signal: AbortSignal; clear: () => void } {
  const controller = new AbortController();
  const timer = setTimeout(
    () => controller.abort(new DOMException('The operation timed out.', 'TimeoutError')),
    ms,
  ).unref();
  return { signal: controller.signal, clear: () => clearTimeout(timer) };
}
