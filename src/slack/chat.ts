import { ErrorCode, type WebClient } from '@slack/web-api';
import { z } from 'zod';
import { ChatError } from '../chat-errors.ts';
import type { JobChat } from '../jobs/ports.ts';
import type { Logger } from '../log.ts';
import type { Announcement, JobThread, WorkspaceRef } from '../store/types.ts';
import { statusReaction } from './action-blocks.ts';
import {
  ANNOUNCEMENT_EVENT,
  announcementMessage,
  type Message,
  ROOT_EVENT,
  rootMessage,
} from './blocks.ts';
import { type ClientSource, TOKEN_REFUSALS } from './workspace-clients.ts';

/** A Slack answer that means the call's work is done already (a reaction there, or gone). */
async function tolerate(code: string, fn: () => Promise<unknown>): Promise<void> {
  try {
    await fn();
  } catch (err) {
    if (!(err instanceof ChatError && err.code === code)) throw err;
  }
}

/** The metadata a job's root message carries, as read back from the channel. */
const RootMetadata = z.object({
  event_type: z.literal(ROOT_EVENT),
  event_payload: z.object({ marker: z.string().optional(), job_id: z.string().optional() }),
});

/** The metadata our announcements carry, as read back from a thread. */
const AnnouncementMetadata = z.object({
  event_type: z.literal(ANNOUNCEMENT_EVENT),
  event_payload: z.object({ key: z.string() }),
});

/**
 * Platform errors worth asking again for; any other error code will not go away by
 * retrying (bad channel, bad blocks, revoked token, …), so it is not retried forever.
 */
const TRANSIENT = new Set([
  // A rotating token past its time: the next attempt asks the installer, which refreshes it.
  'token_expired',
  'ratelimited',
  'rate_limited', // chat.postMessage: too many messages posted
  'internal_error',
  'fatal_error',
  'service_unavailable',
  'request_timeout',
  'team_added_to_org',
]);

/** Maps the Slack SDK's errors onto ours, once, for every call below. */
export function toChatError(err: unknown): ChatError {
  // Ours already (a workspace with no install, an install that could not be read).
  if (err instanceof ChatError) return err;
  const e = err as {
    code?: string;
    data?: { error?: string };
    retryAfter?: number;
    statusCode?: number;
  };
  switch (e?.code) {
    case ErrorCode.PlatformError: {
      const code = e.data?.error ?? 'unknown_error';
      return new ChatError(code, { retryable: TRANSIENT.has(code) });
    }
    case ErrorCode.RateLimitedError:
      return new ChatError('ratelimited', {
        retryable: true,
        retryAfterMs: (e.retryAfter ?? 1) * 1000,
      });
    case ErrorCode.HTTPError:
      return new ChatError(`http_${e.statusCode ?? 'error'}`, { retryable: true, answered: false });
    case ErrorCode.RequestError:
      return new ChatError('request_failed', { retryable: true, answered: false });
    default:
      return new ChatError(err instanceof Error ? err.message : 'unknown_error', {
        retryable: true,
        answered: false,
      });
  }
}

/** What the Slack side counts about itself; the Prometheus side is in src/app/metrics.ts. */
export interface SlackMetrics {
  /** A Web API call failed; `code` is Slack's error code or ours (`ratelimited`, `http_503`). */
  slackError(method: string, code: string): void;
}

interface Page {
  messages?: { ts?: string; metadata?: unknown }[];
  response_metadata?: { next_cursor?: string };
}

/** The first message, across every page of a history or a thread, that `match`es. */
export async function anyMessage<M extends { ts?: string; metadata?: unknown }>(
  page: (cursor: string | undefined) => Promise<Page & { messages?: M[] }>,
  match: (m: M) => boolean,
): Promise<M | undefined> {
  let cursor: string | undefined;
  do {
    const res = await page(cursor);
    const found = res.messages?.find(match);
    if (found) return found;
    cursor = res.response_metadata?.next_cursor || undefined;
  } while (cursor);
  return undefined;
}

/**
 * The jobs feature's chat port, spoken in Slack Web API calls, each with the client of the
 * workspace it is for (`clients`: SlackApp's clientFor, or one client for every workspace).
 */
export function createSlackJobChat(
  clients: ClientSource,
  log: Logger,
  metrics?: SlackMetrics,
): JobChat {
  const chatLog = log.child({ component: 'slack-chat' });
  const parts = (m: Message) => ({ text: m.text, blocks: m.blocks });

  /**
   * Every call goes through here: the workspace's client first, then the call; SDK errors
   * become ChatErrors, counted by method. A token Slack refused is not used again.
   */
  async function call<T>(
    ws: WorkspaceRef,
    method: string,
    fn: (client: WebClient) => Promise<T>,
  ): Promise<T> {
    const client = await clients.clientFor(ws);
    try {
      return await fn(client);
    } catch (err) {
      const e = toChatError(err);
      if (TOKEN_REFUSALS.has(e.code)) clients.refused?.(ws, client);
      metrics?.slackError(method, e.code);
      throw e;
    }
  }

  return {
    async postRoot(ws, { channelId, userId, prompt, marker, threadTs, contextMessages, origin }) {
      const msg = rootMessage({
        contextMessages: contextMessages ?? null,
        origin: origin ?? null,
        userId,
        prompt,
        status: 'starting',
        jobId: null,
        model: null,
        repository: null,
        ref: null,
        prLink: null,
        error: null,
      });
      const res = await call(ws, 'chat.postMessage', (client) =>
        client.chat.postMessage({
          channel: channelId,
          ...(threadTs ? { thread_ts: threadTs } : {}),
          ...parts(msg),
          unfurl_links: false,
          metadata: { event_type: ROOT_EVENT, event_payload: { marker } },
        }),
      );
      if (!res.ts) throw new ChatError('no_ts', { retryable: false });
      return { ts: res.ts };
    },

    async findRoot(ws, channelId, marker, sinceMs, threadTs) {
      const oldest = String(sinceMs / 1000);
      const page = (cursor: string | undefined) => {
        const paging = { include_all_metadata: true, limit: 200, ...(cursor ? { cursor } : {}) };
        // A root posted inside a thread (a mention) is not in the channel's history: only
        // conversations.replies lists it.
        return threadTs
          ? call(ws, 'conversations.replies', (client) =>
              client.conversations.replies({ channel: channelId, ts: threadTs, ...paging }),
            )
          : call(ws, 'conversations.history', (client) =>
              client.conversations.history({ channel: channelId, oldest, ...paging }),
            );
      };
      const root = await anyMessage(page, (m) => {
        const meta = RootMetadata.safeParse(m.metadata);
        return meta.success && meta.data.event_payload.marker === marker;
      });
      return root?.ts ?? null;
    },

    async showJob(thread: JobThread) {
      await call(thread, 'chat.update', (client) =>
        client.chat.update({
          channel: thread.channelId,
          ts: thread.rootTs,
          ...parts(rootMessage(thread)),
          // The job id, for tools reading the channel: it is no longer shown on the root.
          // (The marker only finds a root whose post was never confirmed: not this one.)
          ...(thread.jobId
            ? { metadata: { event_type: ROOT_EVENT, event_payload: { job_id: thread.jobId } } }
            : {}),
        }),
      );
    },

    async showStatus(thread: JobThread) {
      const want = statusReaction(thread);
      const had = thread.rootReaction ?? null;
      if (want === had) return had;
      // On the thread's parent, the message the channel shows: the root for /agent and DMs,
      // the person's own message for a job started by a mention.
      const at = { channel: thread.channelId, timestamp: thread.threadTs };
      // Added first: if the removal fails, the root shows both for a moment, never neither.
      await tolerate('already_reacted', () =>
        call(thread, 'reactions.add', (client) => client.reactions.add({ ...at, name: want })),
      );
      if (had)
        await tolerate('no_reaction', () =>
          call(thread, 'reactions.remove', (client) =>
            client.reactions.remove({ ...at, name: had }),
          ),
        );
      return want;
    },

    async announce(thread: JobThread, a: Announcement) {
      await call(thread, 'chat.postMessage', (client) =>
        client.chat.postMessage({
          channel: thread.channelId,
          thread_ts: thread.threadTs,
          ...parts(announcementMessage(a, thread)),
          unfurl_links: false,
          metadata: {
            event_type: ANNOUNCEMENT_EVENT,
            event_payload: { key: a.key, job_id: thread.jobId ?? '', kind: a.kind },
          },
        }),
      );
    },

    hasAnnounced(thread: JobThread, key: string) {
      return anyMessage(
        (cursor) =>
          call(thread, 'conversations.replies', (client) =>
            client.conversations.replies({
              channel: thread.channelId,
              ts: thread.threadTs,
              include_all_metadata: true,
              limit: 200,
              ...(cursor ? { cursor } : {}),
            }),
          ),
        (m) => {
          const meta = AnnouncementMetadata.safeParse(m.metadata);
          return meta.success && meta.data.event_payload.key === key;
        },
      ).then((found) => found !== undefined);
    },

    async acknowledgeReply(ws, channelId, ts) {
      await tolerate('already_reacted', () =>
        call(ws, 'reactions.add', (client) =>
          client.reactions.add({ channel: channelId, timestamp: ts, name: 'eyes' }),
        ),
      );
    },

    async tellUser(ws, { channelId, userId, text, threadTs }) {
      try {
        await call(ws, 'chat.postEphemeral', (client) =>
          client.chat.postEphemeral({
            channel: channelId,
            user: userId,
            text,
            ...(threadTs ? { thread_ts: threadTs } : {}),
          }),
        );
      } catch (err) {
        // Nothing else reaches this user; the log line is what is left.
        chatLog.warn({ err, channelId, userId }, 'slack.ephemeral_failed');
      }
    },
  };
}
