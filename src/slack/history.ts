import type { WebClient } from '@slack/web-api';
import { anyMessage, toChatError } from './chat.ts';

export type HistoryMessage = NonNullable<
  Awaited<ReturnType<WebClient['conversations']['history']>>['messages']
>[number];

/**
 * Whether a top-level message of the channel posted since `sinceMs` matches `wanted`, read
 * page by page with the messages' metadata. How a report already in the channel is
 * recognised after a crash, so that it is not posted twice.
 */
export async function historyHas(
  client: WebClient,
  channelId: string,
  sinceMs: number,
  wanted: (m: HistoryMessage) => boolean,
): Promise<boolean> {
  return (await historyFind(client, channelId, sinceMs, wanted)) !== undefined;
}

/** The first top-level message since `sinceMs` that matches `wanted`, as historyHas reads. */
export async function historyFind(
  client: WebClient,
  channelId: string,
  sinceMs: number,
  wanted: (m: HistoryMessage) => boolean,
): Promise<HistoryMessage | undefined> {
  const page = (cursor: string | undefined) =>
    client.conversations
      .history({
        channel: channelId,
        oldest: String(sinceMs / 1000),
        limit: 200,
        include_all_metadata: true,
        ...(cursor ? { cursor } : {}),
      })
      .catch((err: unknown) => {
        throw toChatError(err);
      });
  return anyMessage(page, wanted);
}

/** Whether a reply in the thread `threadTs` matches `wanted` (its metadata read too). */
export async function threadHas(
  client: WebClient,
  channelId: string,
  threadTs: string,
  wanted: (m: HistoryMessage) => boolean,
): Promise<boolean> {
  const page = (cursor: string | undefined) =>
    client.conversations
      .replies({
        channel: channelId,
        ts: threadTs,
        limit: 200,
        include_all_metadata: true,
        ...(cursor ? { cursor } : {}),
      })
      .catch((err: unknown) => {
        throw toChatError(err);
      });
  return (await anyMessage(page, wanted)) !== undefined;
}

/** The metadata payload of a message marked with `eventType`; undefined for any other. */
export function markedWith(
  m: HistoryMessage,
  eventType: string,
): Record<string, unknown> | undefined {
  if (m.metadata?.event_type !== eventType) return undefined;
  return (m.metadata.event_payload as Record<string, unknown> | undefined) ?? {};
}
