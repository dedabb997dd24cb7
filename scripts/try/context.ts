/**
 * What every control endpoint works with: the fakes, the bot's address, and what the script
 * records beside FakeSlack (slash-command acks, who each response_url belongs to). Also how
 * an endpoint sends the bot a signed request and tells what the bot did about it.
 */
import type { ApiEmulator } from '../../test/fakes/api-emulator.ts';
import {
  type FakeSlack,
  type RecordedCall,
  SLACK_IDS,
  type Workspace,
} from '../../test/fakes/slack.ts';
import { postSigned } from '../../test/helpers/slack-requests.ts';
import { HttpError, type Json } from './http.ts';

/** A slash-command ack in the shape the slack-view renderer reads (`acks` in calls.json). */
export interface Ack {
  command: string;
  text: string;
  channel: string;
  user: string;
  status: number;
  body: string;
  at: number;
  slackSeq: number;
}

export interface Ctx {
  slack: FakeSlack;
  api: ApiEmulator;
  /** The bot's `/slack/events`. */
  eventsUrl: string;
  signingSecret: string;
  /** Where POST /dump writes calls.json. */
  out: string;
  acks: Ack[];
  /** response_url id → where and for whom, so the renderer puts the answer in its channel. */
  responseUrls: Map<string, { channel: string; user: string; command?: string }>;
  /** With --bot: settles once the bot answers /healthz, so a request sent at once waits for it. */
  botReady?: Promise<void>;
}

export interface BotAnswer {
  status: number;
  text: string;
  json?: unknown;
}

/** Posts a signed request to the bot; a bot that is not listening is a 502, not a crash. */
export async function toBot(ctx: Ctx, body: string): Promise<BotAnswer> {
  await ctx.botReady;
  try {
    return await postSigned(ctx.eventsUrl, ctx.signingSecret, { body });
  } catch (err) {
    const cause = err instanceof Error && err.cause instanceof Error ? err.cause.message : '';
    throw new HttpError(
      502,
      `the bot is not reachable at ${ctx.eventsUrl}${cause ? ` (${cause})` : ''}; start it with the printed env`,
    );
  }
}

/**
 * A request built as the default workspace's (its team id, its bot user) made the person's
 * own workspace's, as Slack would send it from there (`--workspaces 2`).
 */
export function fromWorkspaceOf<T>(ctx: Ctx, user: string, payload: T): T {
  const ws: Workspace = ctx.slack.workspaceOf(user);
  if (ws.team === SLACK_IDS.team) return payload;
  const json = JSON.stringify(payload)
    .replaceAll(`"${SLACK_IDS.team}"`, `"${ws.team}"`)
    .replaceAll(`"${SLACK_IDS.botUser}"`, `"${ws.botUser}"`)
    .replaceAll(`<@${SLACK_IDS.botUser}>`, `<@${ws.botUser}>`);
  return JSON.parse(json) as T;
}

export function lastSlackSeq(ctx: Ctx): number {
  const { calls, responses } = ctx.slack;
  return Math.max(0, calls.at(-1)?.seq ?? 0, responses.at(-1)?.seq ?? 0);
}

/** Quiet this long and the bot is taken to be done with what it was sent. */
const QUIET_MS = 400;
/** Waits no longer than this: what comes later shows in GET /messages, /views, /answers. */
const SETTLE_MAX_MS = 4_000;

/**
 * Waits until the bot has been quiet towards Slack for a moment (it acks first and works
 * after), then lists what it did since `since`: Web API calls and response_url answers. A
 * convenience for a person at a terminal; a test asserts on GET endpoints instead.
 */
export async function effectsSince(ctx: Ctx, since: number): Promise<Json> {
  const deadline = Date.now() + SETTLE_MAX_MS;
  let seen = lastSlackSeq(ctx);
  let quietSince = Date.now();
  while (Date.now() < deadline && Date.now() - quietSince < QUIET_MS) {
    await new Promise((r) => setTimeout(r, 50));
    const now = lastSlackSeq(ctx);
    if (now !== seen) [seen, quietSince] = [now, Date.now()];
  }
  const calls = ctx.slack.calls.filter((c) => c.seq > since && c.method !== 'auth.test');
  const answers = ctx.slack.responses
    .filter((r) => r.seq > since)
    .map((r) => ({ ...ctx.responseUrls.get(r.id), ...(r.body as Json), status: r.status }));
  return { calls: calls.map(summary), answers };
}

/** One Web API call in a line or two: what was done where, and whether Slack took it. */
export function summary(c: RecordedCall): Json {
  const a = c.args;
  const r = (typeof c.response === 'object' && c.response !== null ? c.response : {}) as Json;
  const view = (r.view ?? a.view) as Json | undefined;
  return {
    method: c.method,
    ok: r.ok,
    error: r.error,
    channel: a.channel,
    user: a.user ?? a.user_id,
    ts: r.ts ?? r.message_ts ?? a.ts ?? a.timestamp,
    thread_ts: a.thread_ts,
    text: a.text,
    reaction: a.name,
    view: view && { id: view.id, type: view.type, texts: texts(view) },
  };
}

/** Every `text` string in a Block Kit structure, in order: a view or message, readable. */
export function texts(v: unknown, into: string[] = []): string[] {
  if (Array.isArray(v)) for (const x of v) texts(x, into);
  else if (typeof v === 'object' && v !== null) {
    for (const [k, x] of Object.entries(v)) {
      if (k === 'text' && typeof x === 'string') into.push(x);
      else texts(x, into);
    }
  }
  return into;
}
