/**
 * What the harness sends the bot, as Slack would: slash commands, thread replies, Events API
 * envelopes, clicks, menu choices and modal submissions, each signed over HTTP to the bot's
 * events URL, or as an envelope over the fake Socket Mode connection when the bot uses one.
 * Harness's methods of the same names delegate here (test/helpers/harness.ts).
 */
import type { FakeSlack } from '../fakes/slack.ts';
import type { FakeSocketMode } from '../fakes/socket-mode.ts';
import { CHANNEL, SECRETS, USER } from './harness-defaults.ts';
import {
  blockActions,
  findButton,
  findOverflowOption,
  formEncode,
  messageEvent,
  overflowActions,
  postSigned,
  slackEncode,
  slashCommand,
  viewSubmission,
} from './slack-requests.ts';

type Json = Record<string, unknown>;

/** Where a payload goes: Socket Mode when the bot uses it, else the bot's events URL. */
export interface PayloadTarget {
  readonly slack: FakeSlack;
  readonly socket: FakeSocketMode | undefined;
  readonly eventsUrl: string;
}

export interface CommandOptions {
  command?: string;
  channel?: string;
  /** What Slack names the conversation: `directmessage` in a DM, `mpdm-…` in a group DM. */
  channelName?: string;
  user?: string;
  raw?: boolean;
  url?: string;
}

/**
 * Runs a slash command as Slack would, over HTTP or Socket Mode; returns the ack. Slack
 * sends what the person typed with `&`, `<`, `>` encoded; `raw` sends text as given
 * (e.g. the `<!channel>` Slack itself produces for a typed @channel mention).
 */
export async function command(t: PayloadTarget, text: string, o: CommandOptions = {}) {
  const responseUrl = t.slack.responseUrl();
  const fields = slashCommand({
    text: o.raw ? text : slackEncode(text),
    response_url: responseUrl,
    command: o.command ?? '/agent',
    channel_id: o.channel ?? CHANNEL,
    ...(o.channelName ? { channel_name: o.channelName } : {}),
    user_id: o.user ?? USER,
  });
  if (t.socket) {
    const ack = await t.socket.send('slash_commands', fields);
    return { status: 200, body: (ack.payload ?? null) as Json | null, responseUrl };
  }
  const res = await postSigned(o.url ?? t.eventsUrl, SECRETS.signingSecret, {
    body: formEncode(fields),
  });
  return { status: res.status, body: (res.json ?? null) as Json | null, responseUrl };
}

/** A person replies in a thread: the message lands in Slack, then Slack sends the event. */
export async function reply(
  t: PayloadTarget,
  threadTs: string,
  text: string,
  o: { user?: string; channel?: string; eventId?: string } = {},
) {
  const channel = o.channel ?? CHANNEL;
  const user = o.user ?? USER;
  const { ts } = t.slack.addUserMessage({
    channel,
    user,
    text: slackEncode(text),
    thread_ts: threadTs,
  });
  const body = messageEvent({
    text: slackEncode(text),
    channel,
    user,
    ts,
    thread_ts: threadTs,
    ...(o.eventId ? { event_id: o.eventId } : {}),
  });
  await deliverEvent(t, body);
  return { ts, body };
}

/** Delivers an Events API envelope (a redelivery carries a retry number). */
export async function deliverEvent(t: PayloadTarget, body: Json, retryNum?: number) {
  if (t.socket) {
    await t.socket.send(
      'events_api',
      body,
      retryNum === undefined ? {} : { retryAttempt: retryNum, retryReason: 'timeout' },
    );
    return { status: 200 };
  }
  return postSigned(t.eventsUrl, SECRETS.signingSecret, {
    body: JSON.stringify(body),
    ...(retryNum === undefined ? {} : { retryNum, retryReason: 'http_timeout' }),
  });
}

/**
 * Someone clicks the button `actionId` on a message the bot posted, as Slack would send
 * it (signed HTTP, or an `interactive` envelope); throws when the message shows no such
 * button. Returns the ack's status and body, and where the bot's answers to the click go.
 */
export async function click(
  t: PayloadTarget,
  messageTs: string,
  actionId: string,
  o: { user?: string; channel?: string; url?: string; triggerIssuedAt?: number } = {},
) {
  const channel = o.channel ?? CHANNEL;
  const user = o.user ?? USER;
  const msg = t.slack.history(channel).find((m) => m.ts === messageTs);
  const found = findButton(msg, actionId);
  if (!found) throw new Error(`no button ${actionId} on message ${messageTs}`);
  const responseId = `click-${Math.random().toString(36).slice(2)}`;
  const payload = blockActions({
    channel,
    messageTs,
    user,
    triggerId: t.slack.issueTriggerId(user, o.triggerIssuedAt),
    responseUrl: t.slack.responseUrl(responseId),
    ...found,
  });
  return { ...(await interact(t, payload, o.url)), responseId };
}

/**
 * Someone picks the option `value` of an overflow menu (⋯) on a message the bot posted;
 * throws when the message shows no such option. Returns what `click` returns.
 */
export async function choose(
  t: PayloadTarget,
  messageTs: string,
  value: string,
  o: { user?: string; channel?: string; url?: string } = {},
) {
  const channel = o.channel ?? CHANNEL;
  const user = o.user ?? USER;
  const msg = t.slack.history(channel).find((m) => m.ts === messageTs);
  const found = findOverflowOption(msg, value);
  if (!found) throw new Error(`no menu option ${value} on message ${messageTs}`);
  const responseId = `choose-${Math.random().toString(36).slice(2)}`;
  const payload = overflowActions({
    channel,
    messageTs,
    user,
    triggerId: t.slack.issueTriggerId(user),
    responseUrl: t.slack.responseUrl(responseId),
    ...found,
  });
  return { ...(await interact(t, payload, o.url)), responseId };
}

/** Someone submits a modal the bot opened, with these input values. */
export function submitView(
  t: PayloadTarget,
  view: Json,
  values: Record<string, Record<string, string | null>>,
  o: { user?: string; url?: string } = {},
) {
  return interact(t, viewSubmission(view, o.user ?? USER, values), o.url);
}

/** An interaction payload: form-encoded `payload=` over HTTP, `interactive` over Socket Mode. */
export async function interact(t: PayloadTarget, payload: Json, url?: string) {
  if (t.socket) {
    const ack = await t.socket.send('interactive', payload);
    return { status: 200, body: (ack.payload ?? null) as Json | null };
  }
  const res = await postSigned(url ?? t.eventsUrl, SECRETS.signingSecret, {
    body: formEncode({ payload: JSON.stringify(payload) }),
  });
  return { status: res.status, body: (res.json ?? null) as Json | null };
}
