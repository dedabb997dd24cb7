import type { App } from '@slack/bolt';
import type { WebClient } from '@slack/web-api';
import { z } from 'zod';
import type { Inflight } from '../../inflight.ts';
import type { Logger } from '../../log.ts';
import {
  BUSY_ASK_AGAIN,
  type MessageStartDeps,
  messageKey,
  promptOf,
  startFromMessage,
} from './message-start.ts';
import { parseSubCommand } from './sub-commands.ts';

/**
 * A person's top-level message in their DM with the bot. Edits, deletes, joins and bot
 * messages (any other subtype, or a bot id) are not; thread replies are the follow-up
 * listener's (src/slack/listeners/thread-replies.ts), as in channels.
 */
const DirectMessage = z.object({
  type: z.literal('message'),
  channel_type: z.literal('im'),
  subtype: z.enum(['file_share']).optional(),
  bot_id: z.never().optional(),
  user: z.string().min(1),
  text: z.string().default(''),
  ts: z.string().min(1),
  thread_ts: z.string().optional(),
  channel: z.string().min(1),
});

const Envelope = z.object({ event_id: z.string().min(1), team_id: z.string().optional() });

/**
 * A DM to the bot with a prompt starts a job like `/agent`: its root is a new top-level
 * message in the DM, and that message's thread is the job thread (replies there are
 * follow-ups). Answers (usage, status, could not start) are plain replies in the DM: only the
 * person and the bot are in it.
 */
export function registerDirectMessages(
  app: App,
  deps: MessageStartDeps & { inflight: Inflight },
): void {
  const log = deps.log.child({ component: 'direct-messages' });
  app.event('message', ({ body, event, context, client }) =>
    deps.inflight.track(
      (async () => {
        const m = DirectMessage.safeParse(event);
        if (!m.success || (m.data.thread_ts && m.data.thread_ts !== m.data.ts)) return;
        const envelope = Envelope.safeParse(body);
        const teamId = (envelope.success && envelope.data.team_id) || context.teamId;
        if (!envelope.success || !teamId) {
          log.warn({ channelId: m.data.channel }, 'dm.unreadable');
          return;
        }
        const e = m.data;
        const answer = (text: string) => say(client, e.channel, text, log);
        const ask = {
          teamId,
          enterpriseId: context.enterpriseId,
          channelId: e.channel,
          userId: e.user,
          ts: e.ts,
          prompt: promptOf(e.text, context.botUserId),
          conversation: 'im' as const,
          eventKeys: [`event:${envelope.data.event_id}`, messageKey(e.channel, e.ts)],
        };
        // The words `/agent` answers take the answers lane: they start nothing.
        const lane =
          parseSubCommand(ask.prompt).kind === 'prompt' ? deps.work.starts : deps.work.answers;
        if (!lane.offer('dm.handle', () => startFromMessage(ask, { ...deps, log }, answer))) {
          log.warn({ channelId: e.channel, ts: e.ts }, 'dm.busy');
          await answer(BUSY_ASK_AGAIN);
        }
      })(),
    ),
  );
}

/** A plain message in the DM; a failure leaves a log line (nothing else reaches the person). */
async function say(client: WebClient, channel: string, text: string, log: Logger): Promise<void> {
  try {
    await client.chat.postMessage({ channel, text, unfurl_links: false });
  } catch (err) {
    log.warn({ err, channelId: channel }, 'dm.answer_failed');
  }
}
