/**
 * How a failed chat (Slack) call is described to the features, whichever posted it: the
 * Slack side maps SDK errors onto this once (src/slack/chat.ts).
 */

/** A chat call that failed. `code` is the platform's error code when there is one. */
export class ChatError extends Error {
  readonly code: string;
  readonly retryable: boolean;
  readonly retryAfterMs: number | undefined;
  /**
   * Slack answered with an error, so the call provably did nothing. False when the answer
   * was lost (a dropped connection, a gateway's 5xx): a post may have gone through.
   */
  readonly answered: boolean;
  constructor(
    code: string,
    opts: { retryable: boolean; retryAfterMs?: number; answered?: boolean },
  ) {
    super(`Slack call failed: ${code}`);
    this.name = 'ChatError';
    this.code = code;
    this.retryable = opts.retryable;
    this.retryAfterMs = opts.retryAfterMs;
    this.answered = opts.answered ?? true;
  }
}

/** The bot cannot post in the channel: it must be invited first. */
export const NOT_IN_CHANNEL_CODES: ReadonlySet<string> = new Set([
  'not_in_channel',
  'channel_not_found',
]);

/**
 * The workspace has no installation any more (distributed mode: uninstalled, its tokens
 * revoked), so nothing can be posted there. The Slack side has already settled the
 * workspace's pending announcements and root updates, and said so once for the workspace:
 * the caller has nothing left to record or log about the item in hand.
 */
export const NOT_INSTALLED = 'not_installed';
