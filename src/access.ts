/**
 * Who may use the bot, and where (ALLOWED_USERS, ALLOWED_CHANNELS; in distributed mode, each
 * workspace's own lists from its settings). One pure rule, shared by
 * the Slack middleware that refuses requests and by the path that records thread replies
 * before the ack, so that a refused reply never becomes a follow-up.
 *
 * - ALLOWED_USERS unset: everyone; set: only the people listed.
 * - ALLOWED_CHANNELS unset: every channel and DM; set: only the conversations listed. A DM
 *   with the bot (a `D…` id) is a conversation too: it is allowed when listed, or when
 *   ALLOWED_USERS is also set (then the people list governs DMs, and a listed person may DM
 *   the bot). With ALLOWED_CHANNELS alone, DMs are refused unless listed: limiting the bot to
 *   some channels must not leave every DM open.
 * - No conversation (the App Home, a modal without one): only the people list applies.
 */

export interface AccessLists {
  /** Undefined: nobody is left out. */
  users: readonly string[] | undefined;
  channels: readonly string[] | undefined;
}

export type AccessVerdict = { ok: true } | { ok: false; reason: 'user' | 'channel' };

export interface Access {
  /** Whether anything is restricted at all (a cheap skip for the common case). */
  readonly restricted: boolean;
  check(userId: string, channelId: string | undefined): AccessVerdict;
  isAllowed(userId: string, channelId: string | undefined): boolean;
}

const isDm = (channelId: string) => channelId.startsWith('D');

export function createAccess(lists: AccessLists): Access {
  const users = lists.users ? new Set(lists.users) : undefined;
  const channels = lists.channels ? new Set(lists.channels) : undefined;
  const check = (userId: string, channelId: string | undefined): AccessVerdict => {
    if (users && !users.has(userId)) return { ok: false, reason: 'user' };
    if (!channels || channelId === undefined || channels.has(channelId)) return { ok: true };
    if (isDm(channelId) && users) return { ok: true };
    return { ok: false, reason: 'channel' };
  };
  return {
    restricted: users !== undefined || channels !== undefined,
    check,
    isAllowed: (userId, channelId) => check(userId, channelId).ok,
  };
}

/** A workspace as its own lists are found (distributed mode). */
export interface AccessWorkspace {
  teamId: string;
  enterpriseId?: string | null | undefined;
}

/** Each workspace's lists (distributed mode), read when a request of it is checked. */
export type AccessOf = (ws: AccessWorkspace) => Promise<Access>;

/**
 * A workspace's lists in distributed mode: those its admins saved in the App Home, and for a
 * list they left unset the deployment's own (ALLOWED_USERS, ALLOWED_CHANNELS).
 */
export function workspaceAccess(
  deployment: AccessLists,
  own: { allowedUsers?: readonly string[]; allowedChannels?: readonly string[] },
): Access {
  return createAccess({
    users: own.allowedUsers ?? deployment.users,
    channels: own.allowedChannels ?? deployment.channels,
  });
}

/** Everyone, everywhere: what an unset pair of lists means. */
export const OPEN_ACCESS: Access = createAccess({ users: undefined, channels: undefined });

/** Whose lists refused: the deployment's (ALLOWED_USERS, …) or a workspace's own (distributed mode). */
export type ListsOf = 'deployment' | 'workspace';

/**
 * What a refused person is told (only they see it). In distributed mode the lists are the
 * workspace's, set from Docs Agent's App Home by its admins: the person is sent to them, not
 * to whoever runs the deployment (whose settings the workspace cannot change).
 */
export function refusalText(reason: 'user' | 'channel', lists: ListsOf = 'deployment'): string {
  if (lists === 'workspace')
    return reason === 'user'
      ? "Sorry, you're not on this workspace's list of people who may use me. Ask a Docs Agent admin here to add you (Docs Agent's App Home, Settings, Allowed people)."
      : "Sorry, I'm not enabled in this conversation. Try a channel where I am, or ask a Docs Agent admin here to add this one (Docs Agent's App Home, Settings, Allowed channels).";
  return reason === 'user'
    ? "Sorry, you're not on the list of people who may use me. Ask whoever runs this bot to add you."
    : "Sorry, I'm not enabled in this conversation. Try a channel where I am, or ask whoever runs this bot to enable this one.";
}
