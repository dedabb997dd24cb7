import type { App } from '@slack/bolt';
import type { WebClient } from '@slack/web-api';
import { z } from 'zod';
import { ChatError } from '../../chat-errors.ts';
import type { Inflight } from '../../inflight.ts';
import type { JobChat } from '../../jobs/ports.ts';
import type { Store } from '../../store/types.ts';
import { readThreadContext } from '../thread-context.ts';
import {
  BUSY_ASK_AGAIN,
  type MessageAsk,
  type MessageStartDeps,
  messageKey,
  promptOf,
  startFromMessage,
} from './message-start.ts';
import { parseSubCommand } from './sub-commands.ts';

/** The fields of an `app_mention` event the bot reads. Another bot's mention is not a request. */
const Mention = z.object({
  type: z.literal('app_mention'),
  user: z.string().min(1),
  bot_id: z.never().optional(),
  text: z.string().default(''),
  ts: z.string().min(1),
  channel: z.string().min(1),
  thread_ts: z.string().min(1).optional(),
});

const Envelope = z.object({ event_id: z.string().min(1), team_id: z.string().optional() });

/**
 * `@Docs Agent <prompt>` in a channel: the same flow as `/agent`, in the mention's thread.
 *
 * Design: the job thread is the thread the mention lives in. A top-level mention starts a
 * thread under itself (its ts is the key); a mention inside a thread keeps that thread. The
 * bot's root message (the status it edits in place) is posted as a reply there, so the
 * conversation stays where the person started it, and the store keys the job by
 * (team, channel, that thread's ts) with the root's own ts kept apart (`rootTs`); crash
 * recovery looks for such a root with conversations.replies. Later replies in the thread are
 * follow-ups (the `message` listener), and so is a mention inside a thread that already is a
 * job's.
 *
 * `@Docs Agent help | status | project … | doctor` is answered as `/agent` answers it, never
 * a job nor a follow-up. The answer is ephemeral (in the mention's thread when it was in one):
 * status and the doctor speak of the asker's jobs and the bot's setup, which the rest of the
 * channel has no use for, and an ephemeral leaves no bot message in the conversation.
 *
 * Slack sends a mention twice, as `app_mention` and as `message`: both paths claim the
 * message's `channel:ts` key in the store (here before starting; the follow-up path when it
 * records a reply), so whichever comes second, or a redelivery, does nothing.
 */
export function registerMentions(
  app: App,
  deps: MessageStartDeps & {
    store: Pick<Store, 'claimEvent' | 'findThread'>;
    chat: Pick<JobChat, 'tellUser'>;
    inflight: Inflight;
  },
): void {
  const log = deps.log.child({ component: 'mentions' });
  app.event('app_mention', ({ body, event, context, client }) =>
    deps.inflight.track(
      (async () => {
        const m = Mention.safeParse(event);
        const envelope = Envelope.safeParse(body);
        const teamId = (envelope.success && envelope.data.team_id) || context.teamId;
        if (!m.success || !envelope.success || !teamId) {
          log.info({ type: (event as { type?: string }).type }, 'mention.ignored');
          return;
        }
        const e = m.data;
        const inThread = e.thread_ts && e.thread_ts !== e.ts ? e.thread_ts : undefined;
        const ask: MessageAsk = {
          teamId,
          enterpriseId: context.enterpriseId,
          channelId: e.channel,
          userId: e.user,
          ts: e.ts,
          prompt: promptOf(e.text, context.botUserId),
          conversation: e.channel.startsWith('D') ? 'im' : 'channel',
          eventKeys: [`event:${envelope.data.event_id}`, messageKey(e.channel, e.ts)],
          threadTs: inThread ?? e.ts,
        };
        // Only the requester sees the answers: in the thread when the mention was in one.
        const answer = (text: string) =>
          deps.chat.tellUser(ask, {
            channelId: e.channel,
            userId: e.user,
            text,
            ...(inThread ? { threadTs: inThread } : {}),
          });
        // `help`, `status`, `project`, `doctor` are answers, not starts: they take the
        // answers lane, and never wait behind (or are refused for) a burst of starts.
        const answersOnly = parseSubCommand(ask.prompt).kind !== 'prompt';
        const lane = answersOnly ? deps.work.answers : deps.work.starts;
        const queued = lane.offer('mention.handle', () =>
          handleMention(ask, inThread, { ...deps, log }, answer, {
            client,
            ...(context.botUserId ? { botUserId: context.botUserId } : {}),
            ...(context.botId ? { botId: context.botId } : {}),
          }),
        );
        if (!queued) {
          log.warn({ channelId: e.channel, ts: e.ts }, 'mention.busy');
          await answer(BUSY_ASK_AGAIN);
        }
      })(),
    ),
  );
}

async function handleMention(
  ask: MessageAsk,
  inThread: string | undefined,
  deps: MessageStartDeps & { store: Pick<Store, 'claimEvent' | 'findThread'> },
  answer: (text: string) => Promise<void>,
  slack: { client: WebClient; botUserId?: string; botId?: string },
): Promise<void> {
  const { teamId, channelId, ts } = ask;
  const command = parseSubCommand(ask.prompt).kind !== 'prompt';
  if (!command && inThread && (await deps.store.findThread(teamId, channelId, inThread))) {
    // A job's thread already: the mention is a follow-up, claimed with the same keys as the
    // `message` delivery of it, so the job gets it once. `@bot status` there is answered
    // instead (the `message` delivery of it is not taken for a reply either).
    const reply = { teamId, channelId, threadTs: inThread, ts, userId: ask.userId };
    const outcome = await deps.jobs.deliverReply({ ...reply, text: ask.prompt }, ask.eventKeys);
    deps.log.debug({ channelId, ts, outcome }, 'mention.follow_up');
    return;
  }
  const context = inThread
    ? async () => {
        try {
          return await readThreadContext(slack.client, {
            channelId,
            threadTs: inThread,
            beforeTs: ts,
            ...(slack.botUserId ? { botUserId: slack.botUserId } : {}),
            ...(slack.botId ? { botId: slack.botId } : {}),
          });
        } catch (err) {
          const code = err instanceof ChatError ? err.code : 'unknown';
          deps.log.warn({ err, channelId, threadTs: inThread, code }, 'mention.context_failed');
          await answer(
            `I couldn't read this thread's earlier messages (${code}), so the agent gets only your request.`,
          );
          return undefined;
        }
      }
    : undefined;
  await startFromMessage(ask, deps, answer, context);
}
