import type { KnownBlock } from '@slack/types';
import type { WebClient } from '@slack/web-api';
import { NOT_IN_CHANNEL_CODES } from '../chat-errors.ts';
import type { Logger } from '../log.ts';
import { toChatError } from './chat.ts';

/** Refusals that a plain message would get too: no point in falling back. */
const CANNOT_POST = new Set([...NOT_IN_CHANNEL_CODES, 'is_archived', 'invalid_auth']);

/**
 * Posts a report's message, marked with `metadata` so that it can be recognised in the
 * channel later (history.ts), with its plain `text` for notifications and screen readers.
 * If Slack refuses the blocks for any reason (and would take a plain message), `plain` goes
 * out alone instead, so the report is never lost with its blocks. Without blocks, `plain`
 * (or `text`) is posted as it is. Answers the message's ts.
 */
export async function postMarked(
  client: WebClient,
  log: Logger,
  m: {
    channel: string;
    /** Posts it as a reply in this thread. */
    threadTs?: string | undefined;
    text: string;
    blocks?: KnownBlock[] | undefined;
    /** The fallback's text; `text` when not given. */
    plain?: string;
    metadata: { event_type: string; event_payload: Record<string, string> };
    /** The log line of a refusal: `report.blocks_refused`, … */
    refusedEvent: string;
  },
): Promise<string | undefined> {
  const base = {
    channel: m.channel,
    ...(m.threadTs ? { thread_ts: m.threadTs } : {}),
    text: m.text,
    unfurl_links: false,
    unfurl_media: false,
    metadata: m.metadata,
  };
  if (m.blocks) {
    try {
      return (await client.chat.postMessage({ ...base, blocks: m.blocks })).ts;
    } catch (err) {
      const e = toChatError(err);
      // Not answered: the blocks may have been posted; a second message could repeat them.
      if (!e.answered || CANNOT_POST.has(e.code)) throw e;
      log.warn({ err: e, channelId: m.channel }, m.refusedEvent);
    }
  }
  try {
    return (await client.chat.postMessage({ ...base, text: m.plain ?? m.text })).ts;
  } catch (err) {
    throw toChatError(err);
  }
}
