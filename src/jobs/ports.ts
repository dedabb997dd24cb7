import type { Announcement, JobThread } from '../store/types.ts';

/**
 * What the jobs feature needs from the chat side, in its own words. The Slack
 * implementation lives in `src/slack/`; tests of this feature use a fake of it.
 */
export interface JobChat {
  /** Posts the root message of a new job thread ("starting"). */
  postRoot(req: { channelId: string; userId: string; prompt: string }): Promise<{ ts: string }>;
  /** Brings the root message in line with the thread's current state. */
  showJob(thread: JobThread): Promise<void>;
  /** Posts an announcement as a thread reply, tagged with its key. */
  announce(thread: JobThread, announcement: Announcement): Promise<void>;
  /** Whether the thread already holds a reply tagged with this key (crash recovery). */
  hasAnnounced(thread: JobThread, key: string): Promise<boolean>;
  /** Marks a thread reply as handed to the agent (a reaction). */
  acknowledgeReply(channelId: string, ts: string): Promise<void>;
  /** A message only this user sees, in the thread when given. */
  tellUser(req: {
    channelId: string;
    userId: string;
    text: string;
    threadTs?: string;
  }): Promise<void>;
}

/** A chat call that failed. `code` is the platform's error code when there is one. */
export class ChatError extends Error {
  readonly code: string;
  readonly retryable: boolean;
  readonly retryAfterMs: number | undefined;
  constructor(code: string, opts: { retryable: boolean; retryAfterMs?: number }) {
    super(`Slack call failed: ${code}`);
    this.name = 'ChatError';
    this.code = code;
    this.retryable = opts.retryable;
    this.retryAfterMs = opts.retryAfterMs;
  }
}

/** The bot cannot post in the channel: it must be invited first. */
export const NOT_IN_CHANNEL_CODES: ReadonlySet<string> = new Set([
  'not_in_channel',
  'channel_not_found',
]);
