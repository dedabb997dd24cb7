import { performance } from 'node:perf_hooks';

/**
 * How busy the event loop has been lately, 0 to 1 (Node's event-loop utilisation over the
 * last `windowMs` or so, measured again when asked after the window has passed). Work that
 * waits on Slack or the API leaves the loop mostly idle; near 1, the callbacks of the work in
 * flight are what the next request's ack waits behind.
 */
export function createLoopLoad(windowMs = 100): () => number {
  let mark = performance.eventLoopUtilization();
  let markAt = performance.now();
  let load = 0;
  return () => {
    const now = performance.now();
    if (now - markAt >= windowMs) {
      const current = performance.eventLoopUtilization();
      load = performance.eventLoopUtilization(current, mark).utilization;
      mark = current;
      markAt = now;
    }
    return load;
  };
}
