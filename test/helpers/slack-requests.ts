/**
 * Requests as Slack sends them to an app's HTTP endpoint (Bolt's HTTP receiver): signed bodies,
 * slash-command forms and Events API envelopes. Ids match FakeSlack (team T0001, bot UBOT/BBOT).
 */
import { createHmac, randomBytes } from 'node:crypto';
import { eventCallback } from '../fakes/slack/events.ts';
import { SLACK_IDS } from '../fakes/slack.ts';

// Envelopes and the lifecycle events live with the fake, which builds them on uninstall too.
export {
  appUninstalledEvent,
  eventCallback,
  type InstallPlace,
  tokensRevokedEvent,
} from '../fakes/slack/events.ts';

const nowSec = (): number => Math.floor(Date.now() / 1000);

/** Slack's v0 signing: HMAC-SHA256 over `v0:<ts>:<raw body>` with the signing secret. */
export function signSlackRequest(
  secret: string,
  rawBody: string,
  timestampSec: number = nowSec(),
): { 'x-slack-signature': string; 'x-slack-request-timestamp': string } {
  const digest = createHmac('sha256', secret).update(`v0:${timestampSec}:${rawBody}`).digest('hex');
  return { 'x-slack-signature': `v0=${digest}`, 'x-slack-request-timestamp': String(timestampSec) };
}

export interface SignedPost {
  body: string;
  /** Defaults to JSON for `{…}` bodies, form encoding otherwise (what Slack uses for each). */
  contentType?: string;
  timestampSec?: number;
  /** Slack's redelivery headers, sent when it timed out waiting for the first attempt. */
  retryNum?: number;
  retryReason?: string;
  badSignature?: boolean;
}

export async function postSigned(
  url: string,
  secret: string,
  req: SignedPost,
): Promise<{ status: number; text: string; json?: unknown }> {
  const signed = signSlackRequest(secret, req.body, req.timestampSec);
  if (req.badSignature) {
    const sig = signed['x-slack-signature'];
    signed['x-slack-signature'] = `${sig.slice(0, -1)}${sig.endsWith('0') ? '1' : '0'}`;
  }
  const headers: Record<string, string> = {
    'content-type':
      req.contentType ??
      (req.body.trimStart().startsWith('{')
        ? 'application/json'
        : 'application/x-www-form-urlencoded'),
    'user-agent': 'Slackbot 1.0 (+https://api.slack.com/robots)',
    ...signed,
  };
  if (req.retryNum !== undefined) headers['x-slack-retry-num'] = String(req.retryNum);
  if (req.retryReason !== undefined) headers['x-slack-retry-reason'] = req.retryReason;
  const res = await fetch(url, { method: 'POST', headers, body: req.body });
  const text = await res.text();
  try {
    return { status: res.status, text, json: JSON.parse(text) };
  } catch {
    return { status: res.status, text };
  }
}

/** What Slack does to typed text before sending it to an app: `&`, `<`, `>` as entities. */
export function slackEncode(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

export function formEncode(fields: Record<string, string>): string {
  return new URLSearchParams(fields).toString(); // spaces as '+', like Slack
}

export interface SlashCommandOpts {
  text: string;
  /** Required so tests never post to a real hooks.slack.com URL: use FakeSlack.responseUrl(). */
  response_url: string;
  command?: string;
  channel_id?: string;
  channel_name?: string;
  user_id?: string;
  user_name?: string;
  team_id?: string;
  trigger_id?: string;
}

/** The form fields Slack posts for a slash command (all strings, as on the wire). */
export function slashCommand(o: SlashCommandOpts): Record<string, string> {
  return {
    token: 'legacy-verification-token',
    team_id: o.team_id ?? SLACK_IDS.team,
    team_domain: 'acme',
    channel_id: o.channel_id ?? 'C0001',
    channel_name: o.channel_name ?? 'docs',
    user_id: o.user_id ?? 'U0001',
    user_name: o.user_name ?? 'alice',
    command: o.command ?? '/agent',
    text: o.text,
    api_app_id: SLACK_IDS.appId,
    is_enterprise_install: 'false',
    response_url: o.response_url,
    trigger_id: o.trigger_id ?? `${Date.now()}.1.${randomBytes(8).toString('hex')}`,
  };
}

export interface MessageEventOpts {
  text: string;
  channel?: string;
  user?: string;
  /** Use the ts FakeSlack.addUserMessage returned, so the bot's replies/reactions resolve. */
  ts?: string;
  thread_ts?: string;
  parent_user_id?: string;
  subtype?: string;
  bot_id?: string;
  channel_type?: 'channel' | 'group' | 'im' | 'mpim';
  event_id?: string;
  event_time?: number;
}

let lastTsMicros = 0;
/**
 * A message ts of now that no earlier call gave. Slack never gives two messages the same
 * ts: two built in one millisecond would be one message to the bot's dedupe (its key is
 * channel and ts), and which one it kept would depend on the order they were handled in.
 */
export function uniqueTs(): string {
  lastTsMicros = Math.max(Date.now() * 1_000, lastTsMicros + 1);
  return (lastTsMicros / 1_000_000).toFixed(6);
}

function innerMessage(type: string, o: MessageEventOpts): Record<string, unknown> {
  const ts = o.ts ?? uniqueTs();
  const event: Record<string, unknown> = {
    type,
    user: o.user ?? 'U0001',
    text: o.text,
    ts,
    team: SLACK_IDS.team,
    channel: o.channel ?? 'C0001',
    event_ts: ts,
  };
  if (type === 'message') event.channel_type = o.channel_type ?? 'channel';
  if (o.subtype !== undefined) event.subtype = o.subtype;
  if (o.bot_id !== undefined) Object.assign(event, { bot_id: o.bot_id, app_id: SLACK_IDS.appId });
  if (o.thread_ts !== undefined) {
    event.thread_ts = o.thread_ts;
    if (o.thread_ts !== ts) event.parent_user_id = o.parent_user_id ?? 'U0001';
  }
  return event;
}

/** A full `event_callback` carrying a `message` event. */
export function messageEvent(o: MessageEventOpts): Record<string, unknown> {
  return eventCallback(innerMessage('message', o), o);
}

/** A full `event_callback` carrying an `app_mention` event (text should contain `<@UBOT>`). */
export function appMentionEvent(o: MessageEventOpts): Record<string, unknown> {
  return eventCallback(innerMessage('app_mention', o), o);
}

/** The parts of a stored message a click needs: where it is and the button clicked. */
export interface ClickedButton {
  channel: string;
  messageTs: string;
  user: string;
  triggerId: string;
  responseUrl: string;
  button: Record<string, unknown>;
  blockId: string;
}

/**
 * The button `actionId` in a message's actions blocks, with its block id, as a click needs it;
 * undefined when the message shows no such button.
 */
export function findButton(
  message: { blocks?: unknown[] } | undefined,
  actionId: string,
): Pick<ClickedButton, 'button' | 'blockId'> | undefined {
  return buttonsOf(message).find((x) => x.button.action_id === actionId);
}

/** Every button in a message's actions blocks and sections' accessories, in order. */
export function buttonsOf(
  message: { blocks?: unknown[] } | undefined,
): Pick<ClickedButton, 'button' | 'blockId'>[] {
  type B = {
    type?: string;
    block_id?: string;
    elements?: Record<string, unknown>[];
    accessory?: Record<string, unknown>;
  };
  return (message?.blocks ?? [])
    .map((b) => b as B)
    .flatMap((b) => {
      const blockId = b.block_id ?? '';
      if (b.type === 'actions') return (b.elements ?? []).map((button) => ({ button, blockId }));
      if (b.type === 'section' && b.accessory?.type === 'button')
        return [{ button: b.accessory, blockId }];
      return [];
    });
}

/** A `block_actions` payload as Slack sends it when someone clicks a button in a message. */
export function blockActions(c: ClickedButton): Record<string, unknown> {
  const team = SLACK_IDS.team;
  return {
    type: 'block_actions',
    user: { id: c.user, username: 'someone', name: 'someone', team_id: team },
    api_app_id: SLACK_IDS.appId,
    token: 'legacy-verification-token',
    container: {
      type: 'message',
      message_ts: c.messageTs,
      channel_id: c.channel,
      is_ephemeral: false,
    },
    trigger_id: c.triggerId,
    team: { id: team, domain: 'acme' },
    enterprise: null,
    is_enterprise_install: false,
    channel: { id: c.channel, name: 'docs' },
    message: { type: 'message', ts: c.messageTs, user: SLACK_IDS.botUser },
    state: { values: {} },
    response_url: c.responseUrl,
    actions: [
      {
        action_id: c.button.action_id,
        block_id: c.blockId,
        text: c.button.text,
        ...(c.button.value !== undefined ? { value: c.button.value } : {}),
        ...(c.button.url !== undefined ? { url: c.button.url } : {}),
        type: 'button',
        action_ts: `${(Date.now() / 1000).toFixed(6)}`,
      },
    ],
  };
}

/**
 * The overflow menu (⋯) holding the option `value` in a message's sections, with its block
 * id; undefined when the message shows no such option.
 */
export function findOverflowOption(
  message: { blocks?: unknown[] } | undefined,
  value: string,
): { menu: Record<string, unknown>; option: Record<string, unknown>; blockId: string } | undefined {
  type B = { type?: string; block_id?: string; accessory?: Record<string, unknown> };
  for (const raw of message?.blocks ?? []) {
    const b = raw as B;
    if (b.type !== 'section' || b.accessory?.type !== 'overflow') continue;
    const options = (b.accessory.options ?? []) as Record<string, unknown>[];
    const option = options.find((o) => o.value === value);
    if (option) return { menu: b.accessory, option, blockId: b.block_id ?? '' };
  }
  return undefined;
}

/** A `block_actions` payload as Slack sends it when someone picks an option of an overflow. */
export function overflowActions(
  c: Omit<ClickedButton, 'button'> & {
    menu: Record<string, unknown>;
    option: Record<string, unknown>;
  },
): Record<string, unknown> {
  const payload = blockActions({ ...c, button: {} });
  payload.actions = [
    {
      type: 'overflow',
      action_id: c.menu.action_id,
      block_id: c.blockId,
      selected_option: c.option,
      action_ts: `${(Date.now() / 1000).toFixed(6)}`,
    },
  ];
  return payload;
}

/** A `view_submission` payload for a modal Slack opened, with its inputs' values. */
export function viewSubmission(
  view: Record<string, unknown>,
  user: string,
  values: Record<string, Record<string, string | null>>,
): Record<string, unknown> {
  const state = Object.fromEntries(
    Object.entries(values).map(([block, actions]) => [
      block,
      Object.fromEntries(
        Object.entries(actions).map(([action, value]) => [
          action,
          { type: 'plain_text_input', value },
        ]),
      ),
    ]),
  );
  return {
    type: 'view_submission',
    team: { id: SLACK_IDS.team, domain: 'acme' },
    user: { id: user, username: 'someone', name: 'someone', team_id: SLACK_IDS.team },
    api_app_id: SLACK_IDS.appId,
    token: 'legacy-verification-token',
    trigger_id: `${Math.floor(Date.now() / 1000)}.1.${randomBytes(8).toString('hex')}`,
    view: { ...view, state: { values: state } },
    response_urls: [],
    is_enterprise_install: false,
    enterprise: null,
  };
}
