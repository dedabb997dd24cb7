/**
 * What a person is told when the bot cannot post where they asked. Inviting is only possible
 * in a channel (public C…, or a private channel); in a DM or a group DM it is not, so no
 * `/invite` hint is given there. Shared by the features (no Slack imports).
 */

/** Where a request came from, when known better than by the conversation id. */
export type ConversationKind = 'channel' | 'im' | 'mpim';

/**
 * The kind of a conversation: D… is a DM; C… a channel. G… is a private channel or (in older
 * workspaces) a group DM: `known` (from the event's channel_type or the command's channel
 * name) decides then; without it a G… is taken for a channel.
 */
export function conversationKind(channelId: string, known?: ConversationKind): ConversationKind {
  if (known) return known;
  return channelId.startsWith('D') ? 'im' : 'channel';
}

/** The command payload's `channel_name` tells DMs apart: `directmessage`, `mpdm-…`. */
export function kindFromChannelName(name: string | undefined): ConversationKind | undefined {
  if (name === 'directmessage') return 'im';
  if (name?.startsWith('mpdm-')) return 'mpim';
  return undefined;
}

/**
 * Who the bot is, as far as it is known: in single-workspace mode its user name (auth.test's
 * `user`, unknown before start-up has verified the token) and id; in distributed mode only
 * its user id in the workspace, from the workspace's install.
 */
export interface BotRef {
  name?: string | undefined;
  userId?: string | undefined;
}

/**
 * The answer to a post refused with not_in_channel / channel_not_found, for `what` could not
 * be done ("start a job", "post the report"). With the bot's name, the `/invite` to type;
 * with only its user id, a mention of it (Slack shows its name).
 */
export function notInChannelText(
  what: string,
  kind: ConversationKind,
  bot: BotRef | undefined,
): string {
  if (kind !== 'channel')
    return `I can't post in this conversation, so I can't ${what} here. Send me a direct message, or use a channel I'm in.`;
  const invite = bot?.name
    ? `Invite me with \`/invite @${bot.name}\``
    : bot?.userId
      ? `Invite me (<@${bot.userId}>) to this channel with \`/invite\``
      : 'Invite me to this channel (`/invite` and my name)';
  return `I'm not a member of this channel yet, so I can't ${what} here. ${invite}, then try again.`;
}
