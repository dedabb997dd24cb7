import type { AllMiddlewareArgs, AnyMiddlewareArgs, App } from '@slack/bolt';
import { z } from 'zod';
import { type Access, type AccessOf, refusalText } from '../access.ts';
import type { Logger } from '../log.ts';

/**
 * One Bolt global middleware that applies ALLOWED_USERS / ALLOWED_CHANNELS (in distributed
 * mode, the lists of the request's workspace) to every surface:
 * slash commands, events (messages, mentions, DMs, the App Home), button clicks and modal
 * submissions. A refused request reaches no listener (so nothing reaches the agent or the
 * analytics API); the person alone is told why, and one `access.refused` line is logged.
 * Requests without a person (bot messages, edits, deletes) pass through untouched.
 */

/** What the middleware needs to know about a request; undefined: not a person's request. */
export interface Requester {
  surface: 'command' | 'mention' | 'dm' | 'message' | 'home' | 'action' | 'view' | 'event';
  userId: string;
  /** Undefined where there is no conversation (App Home, a modal). */
  channelId: string | undefined;
  teamId: string | undefined;
  threadTs?: string | undefined;
  ts?: string | undefined;
  text?: string | undefined;
  responseUrl?: string | undefined;
}

const Command = z.object({
  command: z.string(),
  user_id: z.string().min(1),
  channel_id: z.string().min(1),
  team_id: z.string().optional(),
});
const Event = z.object({
  type: z.string(),
  user: z.string().min(1).optional(),
  bot_id: z.string().optional(),
  subtype: z.string().optional(),
  channel: z.string().optional(),
  channel_type: z.string().optional(),
  item: z.object({ channel: z.string().optional() }).optional(),
  tab: z.string().optional(),
  ts: z.string().optional(),
  thread_ts: z.string().optional(),
  text: z.string().optional(),
});
const Envelope = z.object({
  type: z.literal('event_callback'),
  team_id: z.string().optional(),
  event: Event,
});
const Interaction = z.object({
  type: z.enum(['block_actions', 'view_submission', 'shortcut', 'message_action']),
  user: z.object({ id: z.string().min(1) }),
  team: z.object({ id: z.string() }).nullish(),
  channel: z.object({ id: z.string() }).nullish(),
  response_url: z.string().optional(),
  view: z.object({ private_metadata: z.string().optional() }).nullish(),
});

/** Who is asking, where, and through which surface; undefined when no person is asking. */
export function readRequester(body: unknown): Requester | undefined {
  const cmd = Command.safeParse(body);
  if (cmd.success) {
    const c = cmd.data;
    return { surface: 'command', userId: c.user_id, channelId: c.channel_id, teamId: c.team_id };
  }
  const env = Envelope.safeParse(body);
  if (env.success) return fromEvent(env.data.event, env.data.team_id);
  const act = Interaction.safeParse(body);
  if (act.success) {
    const a = act.data;
    return {
      surface: a.type === 'view_submission' ? 'view' : 'action',
      userId: a.user.id,
      channelId: a.channel?.id ?? metadataChannel(a.view?.private_metadata),
      teamId: a.team?.id,
      responseUrl: a.response_url,
    };
  }
  return undefined;
}

function fromEvent(e: z.infer<typeof Event>, teamId: string | undefined): Requester | undefined {
  // Bot messages (ours included), edits, deletes and joins carry no person, or not at top.
  const personal = !e.subtype || e.subtype === 'file_share' || e.subtype === 'thread_broadcast';
  if (!e.user || e.bot_id || (e.type === 'message' && !personal)) return undefined;
  const base = { userId: e.user, teamId, ts: e.ts, threadTs: e.thread_ts, text: e.text };
  if (e.type === 'app_home_opened') return { ...base, surface: 'home', channelId: undefined };
  const channelId = e.channel ?? e.item?.channel;
  if (e.type === 'app_mention') return { ...base, surface: 'mention', channelId };
  if (e.type === 'message') {
    const dm = e.channel_type === 'im' || channelId?.startsWith('D') === true;
    return { ...base, surface: dm ? 'dm' : 'message', channelId };
  }
  return { ...base, surface: 'event', channelId };
}

/** A modal may carry its conversation in private_metadata (JSON with a channel id). */
function metadataChannel(metadata: string | undefined): string | undefined {
  if (!metadata) return undefined;
  try {
    const m = JSON.parse(metadata) as Record<string, unknown>;
    const id = m.channelId ?? m.channel_id ?? m.channel;
    return typeof id === 'string' && id !== '' ? id : undefined;
  } catch {
    return undefined;
  }
}

export type Args = AnyMiddlewareArgs & AllMiddlewareArgs;
type Ack = (answer?: unknown) => Promise<void>;
type Respond = (answer: Record<string, unknown>) => Promise<unknown>;

export interface AccessDeps {
  access: Access;
  /**
   * Distributed mode: the lists of the workspace the request was authorized for (its
   * settings over the deployment's); `access` serves a request naming no team.
   */
  accessOf?: AccessOf | undefined;
  log: Logger;
  /** Whether a thread is a job's (a refused reply there is answered; elsewhere ignored). */
  isJobThread(teamId: string, channelId: string, threadTs: string): Promise<boolean>;
}

export function registerAccessControl(app: App, deps: AccessDeps): void {
  if (!deps.access.restricted && !deps.accessOf) return;
  const log = deps.log.child({ component: 'access' });
  const accessFor = async (args: Args): Promise<Access> => {
    const teamId = args.context.teamId;
    if (!deps.accessOf || !teamId) return deps.access;
    return deps.accessOf({ teamId, enterpriseId: args.context.enterpriseId });
  };
  app.use(async (args: Args) => {
    const who = readRequester(args.body);
    const access = who ? await accessFor(args) : undefined;
    const verdict = who && access ? access.check(who.userId, who.channelId) : { ok: true as const };
    if (!who || verdict.ok) {
      await args.next();
      return;
    }
    const text = refusalText(verdict.reason, deps.accessOf ? 'workspace' : 'deployment');
    const told = await refuse(args, who, text, deps).catch((err: unknown) => {
      log.warn({ err, surface: who.surface, userId: who.userId }, 'access.refusal_failed');
      return false;
    });
    const fields = {
      surface: who.surface,
      userId: who.userId,
      channelId: who.channelId,
      reason: verdict.reason,
      told,
    };
    // Chatter in a refused channel the bot happens to be in is not worth an info line each.
    if (told || who.surface !== 'message') log.info(fields, 'access.refused');
    else log.debug(fields, 'access.refused');
  });
}

/**
 * Tells the person, and only them, why nothing happens; false when nothing was said. Also
 * the not-connected answer of distributed mode (./docs-gate.ts).
 */
export async function refuse(
  args: Args,
  who: Requester,
  text: string,
  deps: Pick<AccessDeps, 'isJobThread'>,
) {
  const { ack, respond } = args as unknown as { ack?: Ack; respond?: Respond };
  const ephemeral = (threadTs?: string) =>
    who.channelId
      ? args.client.chat
          .postEphemeral({
            channel: who.channelId,
            user: who.userId,
            text,
            ...(threadTs ? { thread_ts: threadTs } : {}),
          })
          .then(() => true)
      : Promise.resolve(false);
  switch (who.surface) {
    case 'command':
      await ack?.({ response_type: 'ephemeral', text });
      return true;
    case 'view':
      await ack?.({ response_action: 'update', view: refusalModal(text) });
      return true;
    case 'action':
      await ack?.();
      if (respond && who.responseUrl) {
        await respond({ response_type: 'ephemeral', replace_original: false, text });
        return true;
      }
      return ephemeral();
    case 'home':
      await args.client.views.publish({ user_id: who.userId, view: refusalHome(text) });
      return true;
    case 'mention':
    case 'dm':
      return ephemeral(who.threadTs);
    case 'message':
      return refuseMessage(args, who, deps, ephemeral);
    default:
      return false;
  }
}

/**
 * A channel message: answered only where the bot would have acted, a reply in a job thread.
 * A message that mentions the bot is answered once, as the `app_mention` Slack also sends.
 */
async function refuseMessage(
  args: Args,
  who: Requester,
  deps: Pick<AccessDeps, 'isJobThread'>,
  ephemeral: (threadTs?: string) => Promise<boolean>,
): Promise<boolean> {
  const { channelId, threadTs, ts, teamId } = who;
  const bot = args.context.botUserId;
  if (bot && who.text?.includes(`<@${bot}>`)) return false;
  if (!channelId || !threadTs || threadTs === ts) return false;
  const team = teamId ?? args.context.teamId;
  if (!team || !(await deps.isJobThread(team, channelId, threadTs))) return false;
  return ephemeral(threadTs);
}

/** The modal a refused submission turns into: the reason, and a way to close it. */
export function refusalModal(text: string) {
  return {
    type: 'modal' as const,
    title: { type: 'plain_text' as const, text: 'Docs Agent' },
    close: { type: 'plain_text' as const, text: 'Close' },
    blocks: [{ type: 'section', text: { type: 'plain_text', text } }],
  };
}

function refusalHome(text: string) {
  return {
    type: 'home' as const,
    blocks: [
      { type: 'header', text: { type: 'plain_text', text: 'Docs Agent' } },
      { type: 'section', text: { type: 'plain_text', text } },
    ],
  };
}
