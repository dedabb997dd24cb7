import type { Logger } from '../log.ts';

/** No answer to a person may hold a recovery pass for long. */
const RESPOND_TIMEOUT_MS = 10_000;

/**
 * Answers a person through a command's `response_url` (only they see it) from outside the
 * request that brought it, as Bolt's `respond` would: after a restart, the command is all
 * that is left. Never throws: a URL that expired or was used up is logged, not retried.
 */
export function responseUrlAnswer(
  log: Logger,
): (responseUrl: string, text: string) => Promise<void> {
  const logger = log.child({ component: 'respond' });
  return async (responseUrl, text) => {
    try {
      const res = await fetch(responseUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ response_type: 'ephemeral', replace_original: false, text }),
        signal: AbortSignal.timeout(RESPOND_TIMEOUT_MS),
      });
      await res.body?.cancel();
      if (!res.ok) logger.warn({ status: res.status }, 'respond.refused');
    } catch (err) {
      logger.warn({ err }, 'respond.failed');
    }
  };
}
