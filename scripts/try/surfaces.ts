/**
 * The control endpoints that act as a person in Slack on the bot's conversational surfaces:
 * messages, @mentions, DMs, clicks on the root's buttons, the follow-up modal, the App Home.
 * Each puts what the person wrote into the fake Slack first (as Slack would), sends the bot
 * the signed request Slack would send, and answers the ack and what the bot did about it.
 */
import { randomBytes } from 'node:crypto';
import { SLACK_IDS, type StoredMessage } from '../../test/fakes/slack.ts';
import {
  appMentionEvent,
  blockActions,
  buttonsOf,
  eventCallback,
  findButton,
  findOverflowOption,
  formEncode,
  messageEvent,
  overflowActions,
  slackEncode,
  viewSubmission,
} from '../../test/helpers/slack-requests.ts';
import { type Ctx, effectsSince, fromWorkspaceOf, lastSlackSeq, texts, toBot } from './context.ts';
import { DEFAULT_CHANNEL, DEFAULT_USER } from './env.ts';
import { field, HttpError, type Json, messageTs, optional, slackId } from './http.ts';

/** A person's DM channel with the bot, as the fake names it (U0001 → D0001). */
const dmOf = (user: string): string => `D${user.slice(1)}`;

/** The person's message lands in the fake Slack; a thread that is not there is a 404. */
function addMessage(ctx: Ctx, m: { channel: string; user: string; text: string; thread?: string }) {
  try {
    return ctx.slack.addUserMessage({
      channel: m.channel,
      user: m.user,
      text: m.text,
      ...(m.thread ? { thread_ts: m.thread } : {}),
    });
  } catch (err) {
    throw new HttpError(404, err instanceof Error ? err.message : String(err));
  }
}

/**
 * Sends events to the bot in order, from `user`'s workspace; answers each one's status, then
 * what the bot did.
 */
async function deliver(ctx: Ctx, ts: string, events: Json[], user: string): Promise<Json> {
  const since = lastSlackSeq(ctx);
  const delivered: Json[] = [];
  for (const e of events) {
    const res = await toBot(ctx, JSON.stringify(fromWorkspaceOf(ctx, user, e)));
    delivered.push({ event: (e.event as Json).type, status: res.status });
  }
  return { ts, delivered, ...(await effectsSince(ctx, since)) };
}

/**
 * A person writes in a channel (a thread reply with `thread_ts`); in a DM channel (`D…`)
 * Slack sends it as `message.im`.
 */
export async function say(ctx: Ctx, body: Json, threadRequired: boolean): Promise<Json> {
  const thread = threadRequired ? messageTs(body, 'thread_ts') : optionalTs(body);
  const text = slackEncode(field(body, 'text'));
  const user = slackId(body, 'user', DEFAULT_USER);
  const channel = slackId(body, 'channel', DEFAULT_CHANNEL);
  const { ts } = addMessage(ctx, { channel, user, text, ...(thread ? { thread } : {}) });
  const channel_type = channel.startsWith('D') ? 'im' : 'channel';
  const event = messageEvent({ text, channel, user, ts, channel_type, thread_ts: thread });
  return deliver(ctx, ts, [event], user);
}

/** `@bot <text>` in a channel (or a thread): Slack sends it as `app_mention` and `message`. */
export async function mention(ctx: Ctx, body: Json): Promise<Json> {
  const thread = optionalTs(body);
  const user = slackId(body, 'user', DEFAULT_USER);
  const bot = ctx.slack.workspaceOf(user).botUser;
  const text = `<@${bot}> ${slackEncode(field(body, 'text', { allowEmpty: true }))}`;
  const channel = slackId(body, 'channel', DEFAULT_CHANNEL);
  const { ts } = addMessage(ctx, { channel, user, text, ...(thread ? { thread } : {}) });
  const fields = { text, channel, user, ts, ...(thread ? { thread_ts: thread } : {}) };
  return deliver(ctx, ts, [appMentionEvent(fields), messageEvent(fields)], user);
}

/** A direct message to the bot (`message.im`), in the person's DM channel. */
export async function dm(ctx: Ctx, body: Json): Promise<Json> {
  const user = slackId(body, 'user', DEFAULT_USER);
  return say(ctx, { ...body, user, channel: dmOf(user) }, false);
}

/** The person opens the bot's App Home: `app_home_opened`, then the Home the bot published. */
export async function home(ctx: Ctx, body: Json): Promise<Json> {
  const user = slackId(body, 'user', DEFAULT_USER);
  const event = eventCallback({
    type: 'app_home_opened',
    user,
    channel: dmOf(user),
    tab: 'home',
    event_ts: `${(Date.now() / 1000).toFixed(6)}`,
  });
  const { delivered, calls, answers } = await deliver(ctx, '', [event], user);
  const view = ctx.slack.homeViews.get(user);
  return { delivered, calls, answers, home: view ? texts(view) : null };
}

/**
 * A click on a button of a message the bot posted (its channel found from its ts), or with
 * `option` instead of `action_id`, a pick from a menu (⋯): an insights gap's `draft:<id>`,
 * `evidence:<id>` or `dismiss:<id>`.
 */
export async function click(ctx: Ctx, body: Json): Promise<Json> {
  if (body.home === true) return homeClick(ctx, body);
  const ts = messageTs(body, 'ts');
  const option = optional(body, 'option');
  const user = slackId(body, 'user', DEFAULT_USER);
  const channel = slackId(body, 'channel', channelOf(ctx, ts));
  const msg = ctx.slack.history(channel).find((m) => m.ts === ts);
  if (!msg) throw new HttpError(404, `no message ${ts} in ${channel} (see GET /messages)`);
  const id = `${channel}-${randomBytes(6).toString('hex')}`;
  const at = { channel, messageTs: ts, user, triggerId: ctx.slack.issueTriggerId(user) };
  if (option) {
    const picked = findOverflowOption(msg, option);
    if (!picked) throw new HttpError(404, `message ${ts} has no menu option ${option}`);
    ctx.responseUrls.set(id, { channel, user });
    return interact(
      ctx,
      overflowActions({ ...at, responseUrl: ctx.slack.responseUrl(id), ...picked }),
      user,
    );
  }
  const actionId = field(body, 'action_id');
  const found = findButton(msg, actionId);
  if (!found) throw new HttpError(404, `message ${ts} has no button ${actionId}; ${buttons(msg)}`);
  ctx.responseUrls.set(id, { channel, user });
  const payload = blockActions({ ...at, responseUrl: ctx.slack.responseUrl(id), ...found });
  return interact(ctx, payload, user);
}

/** A click on a button of the person's App Home, as Slack sends it from a `home` view. */
async function homeClick(ctx: Ctx, body: Json): Promise<Json> {
  const user = slackId(body, 'user', DEFAULT_USER);
  const actionId = field(body, 'action_id');
  const view = ctx.slack.homeViews.get(user);
  if (!view) throw new HttpError(404, `${user} has no Home yet: POST /home first`);
  const found = findButton(view as { blocks?: unknown[] }, actionId);
  if (!found) {
    const ids = buttonsOf(view as { blocks?: unknown[] }).map((b) => b.button.action_id);
    throw new HttpError(404, `${user}'s Home has no button ${actionId}; it has ${ids.join(', ')}`);
  }
  const viewId = String(view.id ?? `V${user}`);
  const payload: Json = {
    ...blockActions({
      channel: '',
      messageTs: '',
      user,
      triggerId: ctx.slack.issueTriggerId(user),
      responseUrl: '',
      ...found,
    }),
    container: { type: 'view', view_id: viewId },
    view: { ...view, id: viewId, team_id: SLACK_IDS.team, type: 'home', state: { values: {} } },
  };
  for (const k of ['channel', 'message', 'response_url']) delete payload[k];
  return interact(ctx, payload, user);
}

/** Submits a modal the bot opened (by default the person's last), its first input set to `text`. */
export async function submit(ctx: Ctx, body: Json): Promise<Json> {
  const user = slackId(body, 'user', DEFAULT_USER);
  const viewId = optional(body, 'view_id');
  const filled = Array.isArray(body.values) ? body.values.map(String) : undefined;
  const text = filled ? '' : field(body, 'text', { allowEmpty: true });
  const opened = viewId
    ? ctx.slack.views.find((v) => v.view.id === viewId)
    : ctx.slack.views.findLast((v) => v.user === user);
  if (!opened) {
    throw new HttpError(
      404,
      viewId ? `no modal ${viewId} (see GET /views)` : `no modal open for ${user}`,
    );
  }
  const inputs = ((opened.view.blocks as Json[] | undefined) ?? []).filter(
    (b) => b.type === 'input',
  );
  if (inputs.length === 0) throw new HttpError(409, `modal ${opened.view.id} has no input to fill`);
  const values = Object.fromEntries(
    inputs
      .slice(0, filled?.length ?? 1)
      .map((input, i) => [
        String(input.block_id ?? ''),
        { [String((input.element as Json | undefined)?.action_id ?? '')]: filled?.[i] ?? text },
      ]),
  );
  return {
    view_id: opened.view.id,
    ...(await interact(ctx, viewSubmission(opened.view, user, values), user)),
  };
}

/** GET /views: the modals opened (newest last) and each person's Home, as text. */
export function views(ctx: Ctx, user: string | null): Json {
  const modals = ctx.slack.views
    .filter((v) => !user || v.user === user)
    .map((v) => ({
      id: v.view.id,
      user: v.user,
      callback_id: v.view.callback_id,
      texts: texts(v.view),
    }));
  const homes = [...ctx.slack.homeViews].filter(([u]) => !user || u === user);
  return { modals, homes: Object.fromEntries(homes.map(([u, v]) => [u, texts(v)])) };
}

/** GET /answers: what only one person saw: ephemeral messages and response_url answers. */
export function answers(ctx: Ctx, user: string | null): Json {
  const ephemeral = ctx.slack.ephemerals.map((e) => ({ via: 'chat.postEphemeral', ...e }));
  const responses = ctx.slack.responses.map((r) => ({
    via: 'response_url',
    ...ctx.responseUrls.get(r.id),
    ...(r.body as Json),
  }));
  const all = [...ephemeral, ...responses] as Json[];
  return { answers: all.filter((a) => !user || a.user === user) };
}

async function interact(ctx: Ctx, payload: Json, user: string): Promise<Json> {
  const since = lastSlackSeq(ctx);
  const from = fromWorkspaceOf(ctx, user, payload);
  const res = await toBot(ctx, formEncode({ payload: JSON.stringify(from) }));
  return { status: res.status, ack: res.json ?? res.text, ...(await effectsSince(ctx, since)) };
}

function optionalTs(body: Json): string | undefined {
  return body.thread_ts === undefined || body.thread_ts === null
    ? undefined
    : messageTs(body, 'thread_ts');
}

/** The channel of the bot's message `ts`, from the post that made it; else the default. */
function channelOf(ctx: Ctx, ts: string): string {
  const post = ctx.slack.calls.find(
    (c) => c.method === 'chat.postMessage' && (c.response as Json | undefined)?.ts === ts,
  );
  return typeof post?.args.channel === 'string' ? post.args.channel : DEFAULT_CHANNEL;
}

function buttons(msg: StoredMessage): string {
  const ids = buttonsOf(msg).map((b) => b.button.action_id);
  return ids.length ? `it has ${ids.join(', ')}` : 'it has no buttons now';
}
