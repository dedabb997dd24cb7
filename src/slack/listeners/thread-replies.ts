import type { App } from '@slack/bolt';
import { z } from 'zod';
import type { Access } from '../../access.ts';
import type { ThreadReply as Reply } from '../../jobs/follow-ups.ts';
import type { JobService } from '../../jobs/service.ts';
import type { Logger } from '../../log.ts';
import type { WorkspaceRef } from '../../store/types.ts';
import type { WorkLanes } from '../../work-queue.ts';
import { messageKey, promptOf } from './message-start.ts';
import { parseSubCommand } from './sub-commands.ts';

/**
 * A human reply inside a thread: a plain message, one with files, or one also sent to the
 * channel. Edits, deletes, joins, bot messages (any other subtype, or a bot id) are not.
 */
const ThreadReply = z.object({
  type: z.literal('message'),
  subtype: z.enum(['file_share', 'thread_broadcast']).optional(),
  bot_id: z.never().optional(),
  user: z.string().min(1),
  text: z.string().default(''),
  ts: z.string().min(1),
  thread_ts: z.string().min(1),
  channel: z.string().min(1),
});

const EventCallback = z.object({
  type: z.literal('event_callback'),
  event_id: z.string().optional(),
  team_id: z.string().optional(),
  enterprise_id: z.string().nullish(),
  is_enterprise_install: z.boolean().optional(),
  authorizations: z
    .array(
      z.object({
        team_id: z.string().nullish(),
        enterprise_id: z.string().nullish(),
        is_enterprise_install: z.boolean().optional(),
      }),
    )
    .optional(),
  event: z.unknown(),
});

/** The workspace an event is for, read as Bolt's authorize reads it (its first authorization). */
export interface EventWorkspace {
  teamId: string | undefined;
  enterpriseId: string | undefined;
  isEnterpriseInstall: boolean;
}

function workspaceOf(e: z.infer<typeof EventCallback>): EventWorkspace {
  const auth = e.authorizations?.[0];
  return {
    teamId: (auth?.team_id ?? undefined) || e.team_id || undefined,
    enterpriseId: (auth ? auth.enterprise_id : e.enterprise_id) ?? undefined,
    isEnterpriseInstall: auth?.is_enterprise_install ?? e.is_enterprise_install ?? false,
  };
}

/**
 * A thread reply as the jobs feature sees it, and the Slack event keys it came under; undefined
 * for any other event, and for a reply that is the thread's own root.
 */
function readReply(
  body: unknown,
  fallbackTeamId?: string,
  botUserId?: string,
):
  | {
      reply: Reply;
      eventKeys: string[];
      ws: WorkspaceRef;
      mentions: boolean;
      workspace: EventWorkspace;
    }
  | undefined {
  const envelope = EventCallback.safeParse(body);
  if (!envelope.success) return undefined;
  const parsed = ThreadReply.safeParse(envelope.data.event);
  if (!parsed.success || parsed.data.thread_ts === parsed.data.ts) return undefined;
  const m = parsed.data;
  const teamId = envelope.data.team_id || fallbackTeamId;
  if (!teamId) return undefined;
  const text = promptOf(m.text, botUserId);
  // `@bot status` (or help, project, doctor) in a job thread is asked of the bot, and answered
  // by the mention listener; it is not a follow-up for the agent.
  if (botUserId && m.text.includes(`<@${botUserId}`) && parseSubCommand(text).kind !== 'prompt')
    return undefined;
  const eventId = envelope.data.event_id;
  return {
    ws: { teamId, enterpriseId: envelope.data.enterprise_id ?? undefined },
    mentions: m.text.includes('<@'),
    reply: {
      teamId,
      channelId: m.channel,
      threadTs: m.thread_ts,
      ts: m.ts,
      userId: m.user,
      // A reply that mentions the bot reaches the agent without that mention.
      text,
    },
    // The message's own key too: a mention is also delivered as `app_mention`, and whichever
    // path claims it first handles it (src/slack/listeners/mentions.ts).
    eventKeys: [...(eventId ? [`event:${eventId}`] : []), messageKey(m.channel, m.ts)],
    workspace: workspaceOf(envelope.data),
  };
}

/**
 * Runs before Bolt acknowledges an event: a reply in a job thread is recorded first, so that
 * a crash right after the ack cannot lose it (Slack does not resend what was acked). If the
 * write fails, the event is not acked and Slack delivers it again. Applies the same
 * allowlists as the access middleware (src/access.ts), and, in distributed mode, what
 * authorize and the docs gate apply after it: only a workspace that is installed and has its
 * docs connected (`served`) has its replies recorded, since a recorded reply is sent later.
 */
export function recordThreadReplies(deps: {
  jobs: JobService;
  access?: Access;
  /** The bot's user id in the workspace (an install's own, in distributed mode). */
  botUserId: (ws: WorkspaceRef) => Promise<string | undefined>;
  served?: (ws: EventWorkspace) => Promise<boolean>;
  /**
   * Distributed mode: whether the envelope's workspace is the one the event was authorized
   * for (../workspace-claims.ts); a reply claiming another is never recorded.
   */
  sameWorkspace?: (body: unknown) => boolean;
}) {
  return async (body: unknown): Promise<void> => {
    const plain = readReply(body);
    if (!plain) return;
    if (deps.sameWorkspace && !deps.sameWorkspace(body)) return;
    // Someone the allowlists leave out: never recorded, so never sent (the access
    // middleware tells them why).
    if (deps.access?.isAllowed(plain.reply.userId, plain.reply.channelId) === false) return;
    // Checked before the bot's id is looked up: a workspace no longer installed has none.
    if (deps.served && !(await deps.served(plain.workspace))) return;
    // Only a reply naming someone can name the bot: its workspace's bot user is looked up then.
    const r = plain.mentions ? readReply(body, undefined, await deps.botUserId(plain.ws)) : plain;
    if (!r) return;
    await deps.jobs.recordReply(r.reply, r.eventKeys);
  };
}

/**
 * Replies in a job thread become follow-up messages, each handled once, from the work queue.
 * When the queue is full the reply waits in the store (it was recorded before the ack), and
 * the recovery pass sends it.
 */
export function registerThreadReplies(
  app: App,
  deps: { jobs: JobService; log: Logger; work: Pick<WorkLanes, 'answers'> },
): void {
  const log = deps.log.child({ component: 'thread-replies' });
  app.event('message', async ({ body, context }) => {
    const r = readReply(body, context.teamId, context.botUserId);
    if (!r) return;
    const { channelId, ts } = r.reply;
    const queued = deps.work.answers.offer('reply.deliver', async () => {
      const outcome = await deps.jobs.deliverReply(r.reply, r.eventKeys);
      log.debug({ channelId, ts, outcome }, 'reply.handled');
    });
    if (!queued) log.warn({ channelId, ts }, 'reply.left_for_recovery');
  });
}
