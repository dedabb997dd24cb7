import type { ConversationKind } from '../../invite-hint.ts';
import type { JobService, StartRequest } from '../../jobs/service.ts';
import type { Logger } from '../../log.ts';
import { decodeSlackText } from '../../mrkdwn.ts';
import type { Store } from '../../store/types.ts';
import type { WorkLanes } from '../../work-queue.ts';
import { answerSubCommand, parseSubCommand, type SubCommandDeps } from './sub-commands.ts';

/**
 * What mentions and DMs share: a message that asks for a job, handled once however often
 * Slack delivers it, answered like `/agent` (help, status, project, doctor, or a job).
 */

/** What a person is told when the work queue is full (as `/agent` says it). */
export const BUSY_ASK_AGAIN =
  "I'm starting a lot of jobs right now and couldn't take this one. Please ask again in a minute.";

/** The key a Slack message is claimed under, whichever event (app_mention, message) brought it. */
export const messageKey = (channelId: string, ts: string) => `msg:${channelId}:${ts}`;

/**
 * The message's text without the bot's own mention(s) (`<@UBOT>`, `<@UBOT|name>`) and the
 * spaces after them, decoded; line breaks and the rest are kept as typed.
 */
export function promptOf(text: string, botUserId: string | undefined): string {
  const own = botUserId
    ? text.replace(new RegExp(`<@${botUserId}(\\|[^>]*)?>[ \\t]*`, 'g'), '')
    : text;
  return decodeSlackText(own).trim();
}

export interface MessageAsk {
  teamId: string;
  /** The team's Enterprise Grid org, if any (the request's `context.enterpriseId`). */
  enterpriseId: string | undefined;
  channelId: string;
  userId: string;
  /** The message's own ts. */
  ts: string;
  prompt: string;
  conversation: ConversationKind;
  /** Every key this delivery is known by: its event id and the message's channel:ts. */
  eventKeys: string[];
  /** The existing thread the job goes in (a mention); none: a new top-level root (a DM). */
  threadTs?: string;
}

export interface MessageStartDeps extends SubCommandDeps {
  jobs: JobService;
  store: Pick<Store, 'claimEvent'>;
  log: Logger;
  work: WorkLanes;
}

/**
 * Claims the message durably (store event claims, shared by replicas and restarts), then
 * answers the words `/agent` answers (src/slack/listeners/sub-commands.ts), or starts the job; `answer` reaches the requester only (an
 * ephemeral message in a channel). `context` reads what goes with the prompt (a mention in a
 * human thread); it runs after the claim, from the work queue.
 */
export async function startFromMessage(
  ask: MessageAsk,
  deps: MessageStartDeps,
  answer: (text: string) => Promise<void>,
  context?: () => Promise<StartRequest['context']>,
): Promise<void> {
  const { channelId, userId, ts } = ask;
  if (!(await deps.store.claimEvent(ask.eventKeys, Date.now()))) {
    deps.log.info({ channelId, ts, eventKeys: ask.eventKeys }, 'event.duplicate');
    return;
  }
  const cmd = parseSubCommand(ask.prompt);
  if (cmd.kind !== 'prompt') {
    const who = { teamId: ask.teamId, enterpriseId: ask.enterpriseId, channelId, userId };
    await answer(await answerSubCommand(cmd, who, deps, 'message'));
    return;
  }
  const extra = await context?.();
  await deps.jobs.startJob(
    {
      teamId: ask.teamId,
      enterpriseId: ask.enterpriseId,
      channelId,
      userId,
      prompt: ask.prompt,
      conversation: ask.conversation,
      ...(ask.threadTs ? { threadTs: ask.threadTs } : {}),
      ...(extra ? { context: extra } : {}),
    },
    answer,
  );
}
