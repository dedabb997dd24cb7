/**
 * The workspace's messages: channels and threads, the bot's membership, ephemerals, and
 * the Web API methods that post, edit and read them (chat.*, conversations.*).
 */
import { contentError, threadTsError, withBlockIds } from './checks.ts';
import {
  type Caller,
  DEFAULT_CALLER,
  fail,
  type Handler,
  isObj,
  type Json,
  SLACK_IDS,
  str,
  truthy,
} from './wire.ts';

const APP_ID = SLACK_IDS.appId;

export interface Reaction {
  name: string;
  users: string[];
}
export interface StoredMessage {
  type: 'message';
  channel: string;
  ts: string;
  user: string;
  text: string;
  thread_ts?: string;
  blocks?: unknown[];
  attachments?: unknown;
  metadata?: { event_type: string; event_payload: Json };
  bot_id?: string;
  app_id?: string;
  files?: Json[];
  edited?: { user: string; ts: string };
  reactions: Reaction[];
}
export interface Ephemeral {
  channel: string;
  user: string;
  text?: string;
  blocks?: unknown;
  thread_ts?: string;
  message_ts: string;
}

export class Messages {
  readonly ephemerals: Ephemeral[] = [];
  /** Replies whose thread_ts names no message: Slack answers ok but nobody ever sees them. */
  readonly orphans: StoredMessage[] = [];
  /** What people (not the bot) wrote, through `addUserMessage`. */
  readonly humanMessages: StoredMessage[] = [];
  private readonly channels = new Map<string, StoredMessage[]>();
  private readonly outside = new Set<string>();
  /** Channels that do not exist (deleted, or never created): channel_not_found everywhere. */
  private readonly gone = new Set<string>();
  private readonly names = new Map<string, string>();
  private lastTsMicros = 0;
  /** The workspace a channel belongs to (its messages carry that team id). */
  private readonly teamOf: (channel: string) => string;

  constructor(teamOf: (channel: string) => string = () => SLACK_IDS.team) {
    this.teamOf = teamOf;
  }

  /** The Web API methods answered here, by name. */
  handlers(): [string, Handler][] {
    return [
      ['chat.postMessage', (a, caller) => this.postMessage(a, caller)],
      ['chat.postEphemeral', (a) => this.postEphemeral(a)],
      ['chat.update', (a, caller) => this.update(a, caller)],
      ['conversations.replies', (a) => this.replies(a)],
      ['conversations.history', (a) => this.channelHistory(a)],
      ['chat.getPermalink', (a) => this.permalink(a)],
      ['conversations.info', (a) => this.info(a)],
    ];
  }

  /** Kick the bot out of a channel: posts there now fail with not_in_channel, as in Slack. */
  removeBot(channel: string): void {
    this.outside.add(channel);
  }

  addBot(channel: string): void {
    this.outside.delete(channel);
  }

  /** What conversations.info calls the channel (default: `channel-<id in lower case>`). */
  nameChannel(channel: string, name: string): void {
    this.names.set(channel, name);
  }

  /** The channel no longer exists (or never did): every call naming it gets channel_not_found. */
  deleteChannel(channel: string): void {
    this.gone.add(channel);
  }

  addUserMessage(m: { channel: string; user: string; text: string; thread_ts?: string }): {
    ts: string;
  } {
    if (m.thread_ts && !this.find(m.channel, m.thread_ts)) {
      throw new Error(`addUserMessage: no message ${m.thread_ts} in ${m.channel} to reply to`);
    }
    const msg = this.insert(m.channel, m.thread_ts, { user: m.user, text: m.text });
    this.humanMessages.push(msg);
    return { ts: msg.ts };
  }

  /** The channels holding messages, in the order they were first written to. */
  channelIds(): string[] {
    return [...this.channels].filter(([, list]) => list.length > 0).map(([id]) => id);
  }

  /** Channel history in posting order, thread replies included. */
  history(channel: string): StoredMessage[] {
    const list = this.channels.get(channel) ?? [];
    this.channels.set(channel, list);
    return list;
  }

  /** A thread (root first) as conversations.replies would list it, or [] when unknown. */
  thread(channel: string, ts: string): StoredMessage[] {
    const m = this.find(channel, ts);
    if (!m) return [];
    const root = m.thread_ts ?? m.ts;
    return this.history(channel).filter((x) => x.ts === root || x.thread_ts === root);
  }

  nextTs(): string {
    // Real time, strictly increasing: ts is both id and clock in Slack.
    const us = Math.max(Date.now() * 1000, this.lastTsMicros + 100);
    this.lastTsMicros = us;
    return `${Math.floor(us / 1e6)}.${String(us % 1e6).padStart(6, '0')}`;
  }

  find(channel: string, ts: string): StoredMessage | undefined {
    return this.channels.get(channel)?.find((m) => m.ts === ts);
  }

  /** Errors Slack checks before touching a channel, in its order: channel, membership. */
  channelError(channel: string | undefined): Json | undefined {
    if (!channel || this.gone.has(channel)) return fail('channel_not_found');
    if (this.outside.has(channel)) return fail('not_in_channel');
    return undefined;
  }

  /**
   * conversations.info as Slack answers a bot: a public channel it is not in is described
   * (`is_member: false`); a private one (G…) it is not in does not exist for it.
   */
  private info(a: Json): Json {
    const channel = str(a.channel);
    const isPrivate = channel?.startsWith('G') ?? false;
    if (!channel || this.gone.has(channel) || (isPrivate && this.outside.has(channel)))
      return fail('channel_not_found');
    const isIm = channel.startsWith('D');
    return {
      ok: true,
      channel: {
        id: channel,
        ...(isIm
          ? { is_im: true }
          : { name: this.names.get(channel) ?? `channel-${channel.toLowerCase()}` }),
        is_channel: !isPrivate && !isIm,
        is_group: isPrivate,
        is_private: isPrivate || isIm,
        is_archived: false,
        is_member: !this.outside.has(channel),
      },
    };
  }

  /** A message the caller's bot posts (its bot user and bot id). */
  botMessage(
    channel: string,
    a: Json,
    extra: Partial<StoredMessage> = {},
    caller: Caller = DEFAULT_CALLER,
  ): StoredMessage {
    return this.insert(channel, str(a.thread_ts), {
      user: caller.botUser,
      bot_id: caller.botId,
      app_id: APP_ID,
      text: str(a.text) ?? '',
      ...(Array.isArray(a.blocks) ? { blocks: withBlockIds(a.blocks) } : {}),
      ...(a.attachments !== undefined ? { attachments: a.attachments } : {}),
      ...(isObj(a.metadata) ? { metadata: a.metadata as StoredMessage['metadata'] } : {}),
      ...extra,
    });
  }

  private insert(
    channel: string,
    threadTs: string | undefined,
    fields: Partial<StoredMessage> & { user: string; text: string },
  ): StoredMessage {
    const parent = threadTs ? this.find(channel, threadTs) : undefined;
    const msg: StoredMessage = {
      type: 'message',
      channel,
      ts: this.nextTs(),
      reactions: [],
      ...fields,
    };
    // A reply to a reply lands in the parent's thread.
    if (threadTs) msg.thread_ts = parent ? (parent.thread_ts ?? parent.ts) : threadTs;
    (threadTs && !parent ? this.orphans : this.history(channel)).push(msg);
    return msg;
  }

  private render(m: StoredMessage, withMetadata: boolean): Json {
    const { channel, metadata, reactions, ...rest } = m;
    const out: Json = { ...rest, team: this.teamOf(channel) };
    if (reactions.length > 0)
      out.reactions = reactions.map((r) => ({ ...r, count: r.users.length }));
    if (withMetadata && metadata) out.metadata = metadata;
    if (m.thread_ts) out.parent_user_id = this.find(channel, m.thread_ts)?.user;
    const replies = m.thread_ts ? [] : this.history(channel).filter((x) => x.thread_ts === m.ts);
    const last = replies.at(-1);
    if (last) {
      const users = [...new Set(replies.map((r) => r.user))];
      Object.assign(out, {
        thread_ts: m.ts,
        reply_count: replies.length,
        reply_users: users,
        reply_users_count: users.length,
        latest_reply: last.ts,
      });
    }
    return out;
  }

  private page(items: StoredMessage[], a: Json, defaultLimit: number): Json {
    const limit = Math.min(Number(a.limit) || defaultLimit, 1000);
    const cursor = str(a.cursor);
    const start = cursor
      ? Number(Buffer.from(cursor, 'base64').toString().replace('offset:', ''))
      : 0;
    if (!Number.isInteger(start) || start < 0) return fail('invalid_cursor');
    const more = start + limit < items.length;
    const next = more ? Buffer.from(`offset:${start + limit}`).toString('base64') : '';
    return {
      ok: true,
      messages: items
        .slice(start, start + limit)
        .map((m) => this.render(m, truthy(a.include_all_metadata))),
      has_more: more,
      response_metadata: { next_cursor: next },
    };
  }

  // ---- Web API methods ------------------------------------------------------------------------

  private postMessage(a: Json, caller: Caller): Json {
    const channel = str(a.channel);
    const err = this.channelError(channel) ?? contentError(a) ?? threadTsError(a.thread_ts);
    if (err || !channel) return err ?? fail('channel_not_found');
    const msg = this.botMessage(channel, a, {}, caller);
    return { ok: true, channel, ts: msg.ts, message: this.render(msg, true) };
  }

  private postEphemeral(a: Json): Json {
    const channel = str(a.channel);
    const user = str(a.user);
    const err = this.channelError(channel) ?? contentError(a) ?? threadTsError(a.thread_ts);
    if (err || !channel) return err ?? fail('channel_not_found');
    if (!user) return fail('user_not_in_channel');
    const message_ts = this.nextTs();
    const { text, blocks, thread_ts } = a as {
      text?: string;
      blocks?: unknown;
      thread_ts?: string;
    };
    this.ephemerals.push({ channel, user, text, blocks, thread_ts, message_ts });
    return { ok: true, message_ts };
  }

  private update(a: Json, caller: Caller): Json {
    const channel = str(a.channel) ?? '';
    const ts = str(a.ts) ?? '';
    const m = this.find(channel, ts);
    if (!m) return fail('message_not_found');
    if (m.user !== caller.botUser) return fail('cant_update_message');
    const err = contentError(a);
    if (err) return err;
    // Omitted fields keep their old value; [] clears blocks.
    if (a.text !== undefined) m.text = String(a.text);
    if (Array.isArray(a.blocks)) m.blocks = withBlockIds(a.blocks);
    if (a.attachments !== undefined) m.attachments = a.attachments;
    if (isObj(a.metadata)) m.metadata = a.metadata as StoredMessage['metadata'];
    m.edited = { user: caller.botUser, ts: this.nextTs() };
    return { ok: true, channel, ts, text: m.text, message: this.render(m, true) };
  }

  private replies(a: Json): Json {
    const channel = str(a.channel);
    const err = this.channelError(channel); // bots cannot read channels they are not in
    if (err || !channel) return err ?? fail('channel_not_found');
    // `ts` may name the root or any reply; either way the whole thread comes back.
    const thread = this.thread(channel, str(a.ts) ?? '');
    if (thread.length === 0) return fail('thread_not_found');
    // Slack: `latest` / `oldest` bound the time range, their own ts only with `inclusive`.
    const latest = str(a.latest);
    const oldest = str(a.oldest);
    const inclusive = truthy(a.inclusive);
    const inRange = (m: StoredMessage) =>
      (latest === undefined || Number(m.ts) < Number(latest) || (inclusive && m.ts === latest)) &&
      (oldest === undefined || Number(m.ts) > Number(oldest) || (inclusive && m.ts === oldest));
    return this.page(thread.filter(inRange), a, 1000);
  }

  /** Top-level messages, newest first, as Slack lists them (thread replies are not included). */
  private channelHistory(a: Json): Json {
    const channel = str(a.channel);
    const err = this.channelError(channel);
    if (err || !channel) return err ?? fail('channel_not_found');
    // Slack: only messages after `oldest` (a ts), newest first.
    const oldest = Number(str(a.oldest) ?? '0') || 0;
    const top = this.history(channel)
      .filter((m) => (!m.thread_ts || m.thread_ts === m.ts) && Number(m.ts) > oldest)
      .reverse();
    return this.page(top, a, 100);
  }

  private permalink(a: Json): Json {
    const channel = str(a.channel);
    const ts = str(a.message_ts);
    if (!channel) return fail('channel_not_found');
    if (!ts || !this.find(channel, ts)) return fail('message_not_found');
    const p = `p${ts.replace('.', '')}`;
    return { ok: true, channel, permalink: `https://acme.slack.com/archives/${channel}/${p}` };
  }
}
