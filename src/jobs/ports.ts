import type { Announcement, JobThread } from '../store/types.ts';

/**
 * What the jobs feature needs from the chat side, in its own words. The Slack
 * implementation lives in `src/slack/`; tests of this feature use a fake of it.
 */
export interface JobChat {
  /**
   * Posts the root message of a new job thread ("starting"), tagged with `marker` so that
   * it can be found again if the bot dies before it records the message's ts.
   */
  postRoot(req: {
    channelId: string;
    userId: string;
    prompt: string;
    marker: string;
  }): Promise<{ ts: string }>;
  /** The ts of the root message tagged with `marker`, posted since `sinceMs`; null if none. */
  findRoot(channelId: string, marker: string, sinceMs: number): Promise<string | null>;
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
