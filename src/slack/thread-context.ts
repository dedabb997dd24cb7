import type { WebClient } from '@slack/web-api';
import { z } from 'zod';
import { decodeSlackText, truncate } from '../mrkdwn.ts';
import { toChatError } from './chat.ts';

/** At most this many earlier messages go to the agent with a mention's prompt, newest kept. */
export const CONTEXT_MAX_MESSAGES = 20;
/** …and at most this many characters of them, in total. */
export const CONTEXT_MAX_CHARS = 8_000;
/**
 * Pages of 200 replies read at most (Slack lists a thread oldest first): a thread longer than
 * that gives its first 2,000 messages' newest, a rare and bounded compromise.
 */
const MAX_PAGES = 10;

/** A thread message as conversations.replies lists it; only what the context needs. */
const ThreadMessage = z.object({
  ts: z.string(),
  user: z.string().optional(),
  bot_id: z.string().optional(),
  username: z.string().optional(),
  subtype: z.string().optional(),
  text: z.string().default(''),
});
type ThreadMessage = z.infer<typeof ThreadMessage>;

export interface ThreadContext {
  /** One line per message, oldest first: `<@U…>: text`. */
  text: string;
  messages: number;
}

/** Who wrote a message, as the agent is told: `<@U…>`, or another bot's name or id. */
function author(m: ThreadMessage): string {
  if (m.user) return `<@${m.user}>`;
  return m.username ?? m.bot_id ?? 'someone';
}

/** Subtypes that are not something a person said (joins, topic changes, …). */
const SPOKEN = new Set([undefined, 'file_share', 'thread_broadcast', 'bot_message', 'me_message']);

/**
 * Pure: the earlier messages worth sending, bounded. Keeps those before `beforeTs`, not the
 * bot's own, with text; then the newest that fit in CONTEXT_MAX_MESSAGES and
 * CONTEXT_MAX_CHARS (a single newest message longer than that is cut). Oldest first.
 */
export function boundContext(
  messages: readonly ThreadMessage[],
  opts: { beforeTs: string; botUserId?: string; botId?: string },
): ThreadContext | undefined {
  const earlier = messages.filter(
    (m) =>
      Number(m.ts) < Number(opts.beforeTs) &&
      SPOKEN.has(m.subtype) &&
      !(opts.botUserId && m.user === opts.botUserId) &&
      !(opts.botId && m.bot_id === opts.botId) &&
      m.text.trim() !== '',
  );
  const lines: string[] = [];
  let chars = 0;
  for (const m of [...earlier].reverse()) {
    if (lines.length === CONTEXT_MAX_MESSAGES) break;
    const line = `${author(m)}: ${decodeSlackText(m.text).trim()}`;
    const cost = line.length + (lines.length > 0 ? 1 : 0); // the newline joining it
    if (chars + cost > CONTEXT_MAX_CHARS) {
      if (lines.length === 0) lines.push(truncate(line, CONTEXT_MAX_CHARS));
      break;
    }
    lines.push(line);
    chars += cost;
  }
  if (lines.length === 0) return undefined;
  return { text: lines.reverse().join('\n'), messages: lines.length };
}

/**
 * The earlier messages of a human thread, for a mention made in it (conversations.replies).
 * Throws a ChatError when Slack refuses (missing scope, not in channel, …).
 */
export async function readThreadContext(
  client: WebClient,
  req: {
    channelId: string;
    threadTs: string;
    beforeTs: string;
    botUserId?: string;
    botId?: string;
  },
): Promise<ThreadContext | undefined> {
  const all: ThreadMessage[] = [];
  let cursor: string | undefined;
  try {
    for (let page = 0; page < MAX_PAGES; page++) {
      const res = await client.conversations.replies({
        channel: req.channelId,
        ts: req.threadTs,
        latest: req.beforeTs,
        limit: 200,
        ...(cursor ? { cursor } : {}),
      });
      for (const raw of res.messages ?? []) {
        const m = ThreadMessage.safeParse(raw);
        if (m.success) all.push(m.data);
      }
      cursor = res.response_metadata?.next_cursor || undefined;
      if (!cursor) break;
    }
  } catch (err) {
    throw toChatError(err);
  }
  return boundContext(all, req);
}
