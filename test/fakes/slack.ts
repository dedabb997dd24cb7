/**
 * A fake Slack Web API on 127.0.0.1 for integration tests. It speaks the wire format that
 * @slack/web-api sends (form-encoded or JSON POSTs, Bearer tokens, JSON-encoded fields) and keeps
 * per-channel state, so the bot under test meets Slack's real refusals (not_in_channel,
 * message_not_found, already_reacted, invalid_blocks, 429 Retry-After…) instead of a yes-machine.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { dirname } from 'node:path';
import type { FakeSocketMode } from './socket-mode.ts';

export const SLACK_IDS = {
  team: 'T0001',
  teamName: 'Acme',
  botUser: 'UBOT',
  botUserName: 'docsbot',
  botId: 'BBOT',
  appId: 'A0001',
} as const;
const { team: TEAM, botUser: BOT, botId: BOT_ID, appId: APP_ID } = SLACK_IDS;

export type Json = Record<string, unknown>;
/**
 * Where apps.connections.open sends a client: a FakeSocketMode, or anything handing out its
 * ticketed URLs (a benchmark runs the socket server in another process).
 */
export type SocketModeUrls = Pick<FakeSocketMode, 'connectionUrl'>;
export interface RecordedCall {
  method: string;
  args: Json;
  /** Exactly what was answered: the JSON object, or the raw text for non-JSON answers. */
  response: unknown;
  status: number;
  at: number;
  seq: number;
}
export interface RecordedResponse {
  id: string;
  body: unknown;
  status: number;
  at: number;
  seq: number;
}
export type Fault =
  | { error: string }
  | { status: 429; retryAfterSec: number }
  /** `tookEffect`: Slack did the work and the answer was lost on the way (a gateway 5xx). */
  | { status: 500 | 503; tookEffect?: boolean };
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
export interface StoredFile {
  id: string;
  name: string;
  title: string;
  mimetype: string;
  filetype: string;
  bytes: Buffer;
  created: number;
}

type Answer = { status: number; body: unknown; headers?: Record<string, string> };

/** Slack's published limits, as the fake enforces them once asked to (`enforceRateLimits`). */
export interface RateLimits {
  /** chat.postMessage, per channel: about one a second, short bursts allowed. */
  postMessage: { perSecond: number; burst: number };
  /** chat.update, per workspace: Tier 3, about 50 a minute, bursts allowed. */
  update: { perMinute: number; burst: number };
}
export const SLACK_RATE_LIMITS: RateLimits = {
  postMessage: { perSecond: 1, burst: 3 },
  update: { perMinute: 50, burst: 10 },
};

const isObj = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const str = (v: unknown): string | undefined =>
  typeof v === 'string' && v !== '' ? v : typeof v === 'number' ? String(v) : undefined;
const truthy = (v: unknown): boolean => v === true || v === 'true' || v === '1' || v === 1;
const fail = (error: string, extra: Json = {}): Json => ({ ok: false, error, ...extra });
// Form posts carry these as JSON strings (WebClient JSON.stringify-s every non-scalar argument).
const JSON_FIELDS = ['blocks', 'attachments', 'metadata', 'files', 'unfurls', 'view', 'chunks'];
// Slack's documented Block Kit limits for the block types a bot is likely to send.
const TEXT_LIMITS: Record<string, number> = { section: 3000, header: 150, markdown: 12000 };
const BLOCK_TYPES = new Set([
  ...['actions', 'context', 'divider', 'file', 'header', 'image', 'input', 'markdown'],
  ...['rich_text', 'section', 'table', 'video'],
]);
const MIME: Record<string, [string, string]> = {
  txt: ['text/plain', 'text'],
  md: ['text/plain', 'markdown'],
  json: ['application/json', 'json'],
  csv: ['text/csv', 'csv'],
  diff: ['text/plain', 'diff'],
  patch: ['text/plain', 'diff'],
  png: ['image/png', 'png'],
  jpg: ['image/jpeg', 'jpg'],
  pdf: ['application/pdf', 'pdf'],
};

export class FakeSlack {
  readonly calls: RecordedCall[] = [];
  readonly responses: RecordedResponse[] = [];
  readonly files = new Map<string, StoredFile>();
  readonly ephemerals: Ephemeral[] = [];
  /** Modals opened with views.open, and for whom (the trigger's user). */
  readonly views: { view: Json; user: string }[] = [];
  private readonly triggers = new Map<string, { user: string; issuedAt: number; used: boolean }>();
  private viewSeq = 0;
  /** Replies whose thread_ts names no message: Slack answers ok but nobody ever sees them. */
  readonly orphans: StoredMessage[] = [];
  private readonly humanMessages: StoredMessage[] = [];
  private readonly channels = new Map<string, StoredMessage[]>();
  private readonly outside = new Set<string>();
  /** Tokens Slack no longer accepts (revoked, app uninstalled): invalid_auth. */
  private readonly revoked = new Set<string>();
  /** What auth.test reports in `x-oauth-scopes` (the bot token's granted scopes); unset: none. */
  private grantedScopes: string[] | undefined;
  /** The Home tab each user sees, as views.publish last set it. */
  readonly homeViews = new Map<string, Json>();
  private readonly pendingUploads = new Map<string, { name: string; length: number }>();
  private readonly responseUses = new Map<string, number>();
  private readonly faults: { method: string; fault: Fault; remaining: number }[] = [];
  private readonly latency = new Map<string, number>();
  private readonly waiters = new Set<() => boolean>();
  private limiter:
    | {
        limits: RateLimits;
        now: () => number;
        buckets: Map<string, { tokens: number; at: number }>;
      }
    | undefined;
  private readonly handlers: Map<string, (a: Json) => Json>;
  private readonly server: Server;
  private readonly socketMode: SocketModeUrls | undefined;
  private base = '';
  private seq = 0;
  private lastTsMicros = 0;
  private fileSeq = 0;

  private constructor(socketMode: SocketModeUrls | undefined) {
    this.socketMode = socketMode;
    this.handlers = this.buildHandlers();
    this.server = createServer((req, res) => {
      this.route(req, res).catch((err: unknown) => {
        res.writeHead(500, { 'content-type': 'text/plain' }).end(String(err));
      });
    });
  }

  static async start(opts: { socketMode?: SocketModeUrls } = {}): Promise<FakeSlack> {
    const fake = new FakeSlack(opts.socketMode);
    await new Promise<void>((resolve) => fake.server.listen(0, '127.0.0.1', resolve));
    fake.base = `http://127.0.0.1:${(fake.server.address() as AddressInfo).port}/`;
    return fake;
  }

  /** Web API base for SLACK_API_URL; WebClient appends the method name. */
  get url(): string {
    return `${this.base}api/`;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  // ---- test controls -------------------------------------------------------------------------

  callsTo(method: string): RecordedCall[] {
    return this.calls.filter((c) => c.method === method);
  }

  waitFor(predicate: (c: RecordedCall) => boolean, timeoutMs = 5000): Promise<RecordedCall> {
    return this.waitUntil(
      () => this.calls.find(predicate),
      timeoutMs,
      () => `no matching Slack call within ${timeoutMs}ms; calls so far: ${this.callSummary()}`,
    );
  }

  waitForCalls(method: string, count: number, timeoutMs = 5000): Promise<RecordedCall[]> {
    return this.waitUntil(
      () => (this.callsTo(method).length >= count ? this.callsTo(method) : undefined),
      timeoutMs,
      () =>
        `expected ${count} ${method} call(s) within ${timeoutMs}ms, got ${this.callsTo(method).length}; calls so far: ${this.callSummary()}`,
    );
  }

  waitForResponse(
    predicate: (r: RecordedResponse) => boolean = () => true,
    timeoutMs = 5000,
  ): Promise<RecordedResponse> {
    return this.waitUntil(
      () => this.responses.find(predicate),
      timeoutMs,
      () => `no matching response_url POST within ${timeoutMs}ms; got ${this.responses.length}`,
    );
  }

  failNext(method: string, fault: Fault, times = 1): void {
    this.faults.push({ method, fault, remaining: times });
  }

  /**
   * Every answer of `method` is sent `ms` later (0 for none), like a slow Slack: the call
   * takes effect at once, so a client that dies meanwhile posted without knowing it.
   */
  setLatency(method: string, ms: number): void {
    this.latency.set(method, ms);
  }

  /**
   * From now on, answer like Slack does past its limits: a chat.postMessage beyond the
   * channel's pace, or a chat.update beyond the workspace's Tier 3 budget, gets HTTP 429
   * with `Retry-After` (whole seconds) and does nothing. Refused calls do not count. Off by
   * default; `false` turns it off again. `now` is the clock the buckets refill on.
   */
  enforceRateLimits(limits: RateLimits | false = SLACK_RATE_LIMITS, now = Date.now): void {
    this.limiter = limits ? { limits, now, buckets: new Map() } : undefined;
  }

  /**
   * The scopes the bot token was granted, as Slack reports them in auth.test's (and every
   * call's) `x-oauth-scopes` header; leave one out to see the doctor name it.
   */
  grantScopes(scopes: readonly string[] | undefined): void {
    this.grantedScopes = scopes ? [...scopes] : undefined;
  }

  /** From now on Slack answers `invalid_auth` for this token (revoked, or the app uninstalled). */
  revokeToken(token: string): void {
    this.revoked.add(token);
  }

  /** Kick the bot out of a channel: posts there now fail with not_in_channel, as in Slack. */
  removeBot(channel: string): void {
    this.outside.add(channel);
  }

  addBot(channel: string): void {
    this.outside.delete(channel);
  }

  /** A response_url as Slack hands out with slash commands; only issued ids accept POSTs. */
  responseUrl(id: string = randomBytes(6).toString('hex')): string {
    this.responseUses.set(id, this.responseUses.get(id) ?? 0);
    return `${this.base}response/${id}`;
  }

  /** A trigger id as Slack sends with an interaction by `user`: good for one views.open within 3 s. */
  issueTriggerId(user: string, issuedAt = Date.now()): string {
    const id = `${Math.floor(issuedAt / 1000)}.${randomBytes(4).toString('hex')}.${randomBytes(8).toString('hex')}`;
    this.triggers.set(id, { user, issuedAt, used: false });
    return id;
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

  async dump(file: string): Promise<void> {
    const files = [...this.files.values()].map((f) => ({
      id: f.id,
      name: f.name,
      mimetype: f.mimetype,
      base64: f.bytes.toString('base64'),
    }));
    const { calls, responses, humanMessages: messages } = this;
    await mkdir(dirname(file), { recursive: true });
    await writeFile(file, JSON.stringify({ calls, responses, files, messages }, null, 2));
  }

  // ---- HTTP ----------------------------------------------------------------------------------

  private async route(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', this.base);
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks);
    const [, kind, ...rest] = url.pathname.split('/');
    const id = decodeURIComponent(rest.at(-1) ?? '');
    if (kind === 'api') return this.apiCall(id, req, body, url.searchParams, res);
    if (kind === 'upload' && req.method === 'POST') return this.uploadBytes(id, req, body, res);
    if (kind === 'response' && req.method === 'POST') return this.responsePost(id, body, res);
    send(res, { status: 404, body: 'not found' });
  }

  private apiCall(
    method: string,
    req: IncomingMessage,
    body: Buffer,
    query: URLSearchParams,
    res: ServerResponse,
  ): void {
    let args: Json;
    try {
      args = parseArgs(req.headers['content-type'] ?? '', body, query);
    } catch {
      this.answer(res, method, {}, { status: 200, body: fail('invalid_json') });
      return;
    }
    const bearer = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
    const token = bearer ?? str(args.token);
    delete args.token; // never keep secrets in recordings/dumps
    const handler = this.handlers.get(method);
    const refused = token && this.revoked.has(token) ? fail('invalid_auth') : undefined;
    const work = () =>
      handler ? (refused ?? authError(method, token) ?? handler(args)) : fail('unknown_method');
    const fault = this.takeFault(method);
    if (fault?.tookEffect) work();
    const limited = fault ? undefined : this.rateLimited(method, args);
    // Slack names the token's scopes on every answer to a bot token it accepted.
    const scoped =
      this.grantedScopes && token?.startsWith('xoxb-') && !refused
        ? { 'x-oauth-scopes': this.grantedScopes.join(',') }
        : undefined;
    const answer = (): Answer => ({
      status: 200,
      body: work(),
      ...(scoped ? { headers: scoped } : {}),
    });
    this.answer(res, method, args, fault?.answer ?? limited ?? answer());
  }

  private uploadBytes(id: string, req: IncomingMessage, body: Buffer, res: ServerResponse): void {
    const pending = this.pendingUploads.get(id);
    const type = req.headers['content-type'] ?? '';
    // WebClient posts a multipart form with one file part; curl-style clients post raw bytes.
    const parts = type.startsWith('multipart/form-data') ? multipart(body, type) : [];
    const bytes = (parts.find((p) => p.filename !== undefined) ?? parts[0])?.data ?? body;
    const answer = this.takeFault('upload_url')?.answer ?? {
      status: pending ? 200 : 404,
      body: pending ? `OK - ${bytes.length}` : 'invalid upload url',
    };
    if (pending && answer.status === 200) {
      const [mimetype, filetype] = MIME[pending.name.split('.').pop() ?? ''] ?? [
        'application/octet-stream',
        'binary',
      ];
      const created = Math.floor(Date.now() / 1000);
      const { name } = pending;
      this.files.set(id, { id, name, title: name, mimetype, filetype, bytes, created });
    }
    this.answer(res, 'upload_url', { file_id: id, bytes: bytes.length }, answer);
  }

  private responsePost(id: string, body: Buffer, res: ServerResponse): void {
    let parsed: unknown;
    try {
      parsed = JSON.parse(body.toString());
    } catch {
      parsed = body.toString();
    }
    const uses = this.responseUses.get(id);
    // Slack: a response_url takes at most 5 posts, JSON with something to show.
    const answer: Answer =
      this.takeFault('response_url')?.answer ??
      (uses === undefined
        ? { status: 404, body: 'expired_url' }
        : uses >= 5
          ? { status: 404, body: 'used_url' }
          : !isObj(parsed)
            ? { status: 400, body: 'invalid_payload' }
            : !str(parsed.text) && !parsed.blocks && !parsed.delete_original
              ? { status: 400, body: 'no_text' }
              : { status: 200, body: 'ok' });
    if (uses !== undefined && answer.status === 200) this.responseUses.set(id, uses + 1);
    this.responses.push({ id, body: parsed, status: answer.status, ...this.stamp() });
    send(res, answer);
    this.notify();
  }

  private answer(res: ServerResponse, method: string, args: Json, a: Answer): void {
    this.calls.push({ method, args, response: a.body, status: a.status, ...this.stamp() });
    const delayMs = this.latency.get(method) ?? 0;
    if (delayMs > 0) setTimeout(() => !res.destroyed && send(res, a), delayMs);
    else send(res, a);
    this.notify();
  }

  /** One clock and one sequence for calls and response_url posts, so their order is known. */
  private stamp(): { at: number; seq: number } {
    return { at: Date.now(), seq: ++this.seq };
  }

  private takeFault(method: string): { answer: Answer; tookEffect: boolean } | undefined {
    const i = this.faults.findIndex((f) => f.method === method);
    const entry = this.faults[i];
    if (!entry) return undefined;
    if (--entry.remaining <= 0) this.faults.splice(i, 1);
    const f = entry.fault;
    if ('error' in f) return { answer: { status: 200, body: fail(f.error) }, tookEffect: false };
    if (f.status === 429) {
      const headers = { 'retry-after': String(f.retryAfterSec) };
      return { answer: { status: 429, body: fail('ratelimited'), headers }, tookEffect: false };
    }
    const body = f.status === 503 ? 'Service Unavailable' : 'Internal Server Error';
    return { answer: { status: f.status, body }, tookEffect: f.tookEffect === true };
  }

  /** A token bucket per channel (posts) or for the workspace (updates); 429 when empty. */
  private rateLimited(method: string, args: Json): Answer | undefined {
    const l = this.limiter;
    if (!l) return undefined;
    const { postMessage: post, update } = l.limits;
    const rule =
      method === 'chat.postMessage'
        ? { key: `post:${str(args.channel)}`, perMs: post.perSecond / 1000, burst: post.burst }
        : method === 'chat.update'
          ? { key: 'update', perMs: update.perMinute / 60_000, burst: update.burst }
          : undefined;
    if (!rule) return undefined;
    const t = l.now();
    const b = l.buckets.get(rule.key) ?? { tokens: rule.burst, at: t };
    b.tokens = Math.min(rule.burst, b.tokens + (t - b.at) * rule.perMs);
    b.at = t;
    l.buckets.set(rule.key, b);
    if (b.tokens >= 1) {
      b.tokens -= 1;
      return undefined;
    }
    const retryAfterSec = Math.max(1, Math.ceil((1 - b.tokens) / rule.perMs / 1000));
    const headers = { 'retry-after': String(retryAfterSec) };
    return { status: 429, body: fail('ratelimited'), headers };
  }

  // ---- state ---------------------------------------------------------------------------------

  private nextTs(): string {
    // Real time, strictly increasing: ts is both id and clock in Slack.
    const us = Math.max(Date.now() * 1000, this.lastTsMicros + 100);
    this.lastTsMicros = us;
    return `${Math.floor(us / 1e6)}.${String(us % 1e6).padStart(6, '0')}`;
  }

  private find(channel: string, ts: string): StoredMessage | undefined {
    return this.channels.get(channel)?.find((m) => m.ts === ts);
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
    const out: Json = { ...rest, team: TEAM };
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

  private botMessage(channel: string, a: Json, extra: Partial<StoredMessage> = {}): StoredMessage {
    return this.insert(channel, str(a.thread_ts), {
      user: BOT,
      bot_id: BOT_ID,
      app_id: APP_ID,
      text: str(a.text) ?? '',
      ...(Array.isArray(a.blocks) ? { blocks: withBlockIds(a.blocks) } : {}),
      ...(a.attachments !== undefined ? { attachments: a.attachments } : {}),
      ...(isObj(a.metadata) ? { metadata: a.metadata as StoredMessage['metadata'] } : {}),
      ...extra,
    });
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

  /** Errors Slack checks before touching a channel, in its order: channel, membership. */
  private channelError(channel: string | undefined): Json | undefined {
    if (!channel) return fail('channel_not_found');
    if (this.outside.has(channel)) return fail('not_in_channel');
    return undefined;
  }

  // ---- Web API methods ------------------------------------------------------------------------

  private buildHandlers(): Map<string, (a: Json) => Json> {
    return new Map<string, (a: Json) => Json>([
      ['auth.test', () => this.authTest()],
      ['apps.connections.open', () => this.connectionsOpen()],
      ['chat.postMessage', (a) => this.postMessage(a)],
      ['chat.postEphemeral', (a) => this.postEphemeral(a)],
      ['chat.update', (a) => this.update(a)],
      ['reactions.add', (a) => this.reactionsAdd(a)],
      ['reactions.remove', (a) => this.reactionsRemove(a)],
      ['views.open', (a) => this.viewsOpen(a)],
      ['conversations.replies', (a) => this.replies(a)],
      ['files.getUploadURLExternal', (a) => this.uploadUrl(a)],
      ['files.completeUploadExternal', (a) => this.completeUpload(a)],
      ['conversations.history', (a) => this.channelHistory(a)],
      ['chat.getPermalink', (a) => this.permalink(a)],
      ['views.publish', (a) => this.viewsPublish(a)],
      // Retired by Slack in 2025 in favour of the upload v2 flow above.
      ['files.upload', () => fail('method_deprecated')],
    ]);
  }

  private authTest(): Json {
    const { teamName: team, botUserName: user } = SLACK_IDS;
    const url = 'https://acme.slack.com/';
    return { ok: true, url, team, user, team_id: TEAM, user_id: BOT, bot_id: BOT_ID };
  }

  private connectionsOpen(): Json {
    if (!this.socketMode) return fail('fake_slack_has_no_socket_mode');
    return { ok: true, url: this.socketMode.connectionUrl() };
  }

  private postMessage(a: Json): Json {
    const channel = str(a.channel);
    const err = this.channelError(channel) ?? contentError(a) ?? threadTsError(a.thread_ts);
    if (err || !channel) return err ?? fail('channel_not_found');
    const msg = this.botMessage(channel, a);
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

  private update(a: Json): Json {
    const channel = str(a.channel) ?? '';
    const ts = str(a.ts) ?? '';
    const m = this.find(channel, ts);
    if (!m) return fail('message_not_found');
    if (m.user !== BOT) return fail('cant_update_message');
    const err = contentError(a);
    if (err) return err;
    // Omitted fields keep their old value; [] clears blocks.
    if (a.text !== undefined) m.text = String(a.text);
    if (Array.isArray(a.blocks)) m.blocks = withBlockIds(a.blocks);
    if (a.attachments !== undefined) m.attachments = a.attachments;
    if (isObj(a.metadata)) m.metadata = a.metadata as StoredMessage['metadata'];
    m.edited = { user: BOT, ts: this.nextTs() };
    return { ok: true, channel, ts, text: m.text, message: this.render(m, true) };
  }

  private reactionsAdd(a: Json): Json {
    const channel = str(a.channel);
    const ts = str(a.timestamp);
    const name = str(a.name);
    if (!channel || !ts) return fail('no_item_specified');
    // Names go without colons (`eyes`, not `:eyes:`); skin tones are `name::skin-tone-N`.
    if (!name || !/^[a-z0-9_+'-]+(::skin-tone-[2-6])?$/.test(name)) return fail('invalid_name');
    const m = this.find(channel, ts);
    if (!m) return fail('message_not_found');
    const r = m.reactions.find((x) => x.name === name);
    if (r?.users.includes(BOT)) return fail('already_reacted');
    if (r) r.users.push(BOT);
    else m.reactions.push({ name, users: [BOT] });
    return { ok: true };
  }

  private reactionsRemove(a: Json): Json {
    const channel = str(a.channel);
    const ts = str(a.timestamp);
    const name = str(a.name);
    if (!channel || !ts) return fail('no_item_specified');
    if (!name) return fail('invalid_name');
    const m = this.find(channel, ts);
    if (!m) return fail('message_not_found');
    const r = m.reactions.find((x) => x.name === name);
    if (!r?.users.includes(BOT)) return fail('no_reaction');
    r.users = r.users.filter((u) => u !== BOT);
    if (r.users.length === 0) m.reactions.splice(m.reactions.indexOf(r), 1);
    return { ok: true };
  }

  /**
   * Opens a modal for a trigger Slack handed out with an interaction: unknown ids are
   * `invalid_trigger_id`, ids older than 3 s `expired_trigger_id`, used ones
   * `exchanged_trigger_id`, as Slack answers.
   */
  private viewsOpen(a: Json): Json {
    const triggerId = str(a.trigger_id);
    const trigger = triggerId ? this.triggers.get(triggerId) : undefined;
    if (!triggerId || !trigger) return fail('invalid_trigger_id');
    if (trigger.used) return fail('exchanged_trigger_id');
    if (Date.now() - trigger.issuedAt > TRIGGER_TTL_MS) return fail('expired_trigger_id');
    const err = viewError(a.view);
    if (err) return err;
    trigger.used = true;
    const view = {
      ...(a.view as Json),
      id: `V${String(++this.viewSeq).padStart(10, '0')}`,
      team_id: TEAM,
      app_id: APP_ID,
      bot_id: BOT_ID,
      state: { values: {} },
      hash: randomBytes(6).toString('hex'),
    };
    this.views.push({ view, user: trigger.user });
    return { ok: true, view };
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

  /** The Home tab: a `home` view of at most 100 blocks, per user. */
  private viewsPublish(a: Json): Json {
    const user = str(a.user_id);
    const view = a.view;
    if (!user) return fail('invalid_arguments');
    if (!isObj(view) || view.type !== 'home') return fail('invalid_arguments');
    if (!Array.isArray(view.blocks)) return fail('invalid_blocks_format');
    if (view.blocks.length > 100) return fail('invalid_blocks', { errors: ['too many blocks'] });
    // Within a view the 50-block cap of messages does not apply; the other limits do.
    const err = blocksError(view.blocks.slice(0, 50)) ?? blocksError(view.blocks.slice(50));
    if (err) return err;
    this.homeViews.set(user, view);
    return { ok: true, view: { id: `V${user}`, type: 'home', ...view } };
  }

  private uploadUrl(a: Json): Json {
    const filename = str(a.filename);
    const length = Number(a.length);
    if (!filename || !Number.isInteger(length) || length < 0) return fail('invalid_arguments');
    const file_id = `F${String(++this.fileSeq).padStart(10, '0')}`;
    this.pendingUploads.set(file_id, { name: filename, length });
    return { ok: true, upload_url: `${this.base}upload/v1/${file_id}`, file_id };
  }

  private completeUpload(a: Json): Json {
    if (!Array.isArray(a.files) || a.files.length === 0) return fail('invalid_arguments');
    const channel = str(a.channel_id);
    // Slack ignores `blocks` when `initial_comment` is given; otherwise they must be valid.
    const blocks = str(a.initial_comment) ? undefined : a.blocks;
    const err =
      (channel ? this.channelError(channel) : undefined) ??
      threadTsError(a.thread_ts) ??
      (blocks === undefined ? undefined : blocksError(blocks));
    if (err) return err;
    const done: StoredFile[] = [];
    for (const f of a.files) {
      const file = isObj(f) ? this.files.get(str(f.id) ?? '') : undefined;
      if (!file) return fail('file_not_found'); // unknown id, or its bytes were never uploaded
      if (isObj(f) && str(f.title)) file.title = String(f.title);
      done.push(file);
    }
    const json = done.map((f) => this.fileJson(f));
    // Slack shares asynchronously; posting the file message at once is the state tests await.
    if (channel)
      this.botMessage(
        channel,
        { text: a.initial_comment, thread_ts: a.thread_ts, ...(blocks ? { blocks } : {}) },
        { files: json },
      );
    return { ok: true, files: json };
  }

  private fileJson(f: StoredFile): Json {
    const { id, name, title, mimetype, filetype, created } = f;
    const path = `${TEAM}-${id}/${encodeURIComponent(name)}`;
    return {
      ...{ id, created, timestamp: created, name, title, mimetype, filetype, size: f.bytes.length },
      ...{ user: BOT, user_team: TEAM, mode: 'hosted', is_external: false, is_public: true },
      url_private: `https://files.slack.com/files-pri/${path}`,
      permalink: `https://acme.slack.com/files/${BOT}/${id}/${encodeURIComponent(name)}`,
      // Sharing is asynchronous in Slack: right after completion these are still empty.
      shares: {},
      channels: [],
    };
  }

  private callSummary(): string {
    const describe = (c: RecordedCall) =>
      isObj(c.response) && c.response.ok === false ? `${c.method}(${c.response.error})` : c.method;
    return this.calls.map(describe).join(', ') || '(none)';
  }

  private notify(): void {
    for (const check of [...this.waiters]) check();
  }

  private waitUntil<T>(
    probe: () => T | undefined,
    timeoutMs: number,
    explain: () => string,
  ): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const check = (): boolean => {
        const hit = probe();
        if (hit === undefined) return false;
        cleanup();
        resolve(hit);
        return true;
      };
      const timer = setTimeout(() => {
        cleanup();
        reject(new Error(explain()));
      }, timeoutMs);
      const cleanup = () => {
        clearTimeout(timer);
        this.waiters.delete(check);
      };
      if (!check()) this.waiters.add(check);
    });
  }
}

// ---- wire helpers --------------------------------------------------------------------------

function send(res: ServerResponse, a: Answer): void {
  const isText = typeof a.body === 'string';
  res.writeHead(a.status, {
    'content-type': isText ? 'text/plain; charset=utf-8' : 'application/json; charset=utf-8',
    ...a.headers,
  });
  res.end(isText ? a.body : JSON.stringify(a.body));
}

function authError(method: string, token: string | undefined): Json | undefined {
  if (!token) return fail('not_authed');
  const isApp = token.startsWith('xapp-');
  // App-level tokens open sockets and nothing else; bot tokens cannot open sockets.
  if (method === 'apps.connections.open')
    return isApp
      ? undefined
      : fail(token.startsWith('xoxb-') ? 'not_allowed_token_type' : 'invalid_auth');
  if (isApp) return fail('not_allowed_token_type');
  return token.startsWith('xoxb-') ? undefined : fail('invalid_auth');
}

function parseArgs(contentType: string, body: Buffer, query: URLSearchParams): Json {
  const args: Json = Object.fromEntries(query);
  if (contentType.startsWith('application/json')) {
    Object.assign(args, body.length > 0 ? JSON.parse(body.toString()) : {});
  } else if (contentType.startsWith('multipart/form-data')) {
    for (const p of multipart(body, contentType)) {
      args[p.name] =
        p.filename !== undefined
          ? `<file ${p.filename}, ${p.data.length} bytes>`
          : p.data.toString();
    }
  } else {
    Object.assign(args, Object.fromEntries(new URLSearchParams(body.toString())));
  }
  for (const key of JSON_FIELDS) {
    const v = args[key];
    if (typeof v !== 'string' || !/^\s*[[{]/.test(v)) continue;
    try {
      args[key] = JSON.parse(v);
    } catch {
      // Left as a string: Slack then reports e.g. invalid_blocks_format.
    }
  }
  return args;
}

function multipart(
  body: Buffer,
  contentType: string,
): { name: string; filename?: string; data: Buffer }[] {
  const boundary = /boundary="?([^";]+)"?/.exec(contentType)?.[1];
  if (!boundary) return [];
  const delim = Buffer.from(`--${boundary}`);
  const parts: { name: string; filename?: string; data: Buffer }[] = [];
  for (let pos = body.indexOf(delim); pos !== -1; ) {
    const start = pos + delim.length;
    const next = body.indexOf(delim, start);
    if (next === -1) break;
    const part = body.subarray(start + 2, next - 2); // drop the CRLFs around each part
    const headEnd = part.indexOf('\r\n\r\n');
    const head = part.subarray(0, headEnd).toString();
    parts.push({
      name: /;\s*name="([^"]*)"/.exec(head)?.[1] ?? '',
      filename: /;\s*filename="([^"]*)"/.exec(head)?.[1],
      data: part.subarray(headEnd + 4),
    });
    pos = next;
  }
  return parts;
}

function threadTsError(threadTs: unknown): Json | undefined {
  if (threadTs === undefined || threadTs === '') return undefined;
  return /^\d+\.\d+$/.test(String(threadTs)) ? undefined : fail('invalid_thread_ts');
}

function contentError(a: Json): Json | undefined {
  const blocksErr = a.blocks === undefined ? undefined : blocksError(a.blocks);
  if (blocksErr) return blocksErr;
  const hasBlocks = Array.isArray(a.blocks) && a.blocks.length > 0;
  const hasAttachments = Array.isArray(a.attachments) && a.attachments.length > 0;
  if (!str(a.text) && !hasBlocks && !hasAttachments) return fail('no_text');
  if (typeof a.text === 'string' && a.text.length > 40_000) return fail('msg_too_long');
  const md = a.metadata;
  if (
    md !== undefined &&
    !(isObj(md) && typeof md.event_type === 'string' && isObj(md.event_payload))
  ) {
    return fail('invalid_metadata_format');
  }
  return undefined;
}

/** How long Slack accepts a trigger id after the interaction that issued it. */
const TRIGGER_TTL_MS = 3_000;

/** Slack's checks of a modal: type, title and button labels (24 chars), blocks, metadata. */
function viewError(view: unknown): Json | undefined {
  const bad = (why: string) =>
    fail('invalid_arguments', { response_metadata: { messages: [`[ERROR] ${why}`] } });
  if (!isObj(view) || view.type !== 'modal') return bad('view.type must be modal');
  for (const key of ['title', 'submit', 'close']) {
    const t = view[key];
    if (t === undefined && key !== 'title') continue;
    if (!isObj(t) || t.type !== 'plain_text' || typeof t.text !== 'string' || !t.text)
      return bad(`${key} must be plain_text`);
    if (t.text.length > 24) return bad(`${key} must be less than 25 characters`);
  }
  const blocks = Array.isArray(view.blocks) ? view.blocks : undefined;
  if (!blocks) return bad('blocks is required');
  const hasInput = blocks.some((b) => isObj(b) && b.type === 'input');
  if (hasInput && view.submit === undefined) return bad('submit is required with input blocks');
  if (typeof view.private_metadata === 'string' && view.private_metadata.length > 3000)
    return bad('private_metadata must be less than 3001 characters');
  return blocksError(blocks);
}

function blocksError(blocks: unknown): Json | undefined {
  if (!Array.isArray(blocks)) return fail('invalid_blocks_format');
  const bad = (i: number, why: string) =>
    fail('invalid_blocks', {
      errors: [`${why} [json-pointer:/blocks/${i}]`],
      response_metadata: { messages: [`[ERROR] ${why} [json-pointer:/blocks/${i}]`] },
    });
  if (blocks.length > 50) return bad(50, 'no more than 50 items allowed');
  const ids = new Set<string>();
  for (const [i, b] of blocks.entries()) {
    if (!isObj(b) || typeof b.type !== 'string' || !BLOCK_TYPES.has(b.type))
      return bad(i, 'unsupported type');
    const text = b.type === 'markdown' ? b.text : isObj(b.text) ? b.text.text : undefined;
    const limit = TEXT_LIMITS[b.type];
    if (
      limit !== undefined &&
      text !== undefined &&
      (typeof text !== 'string' || text.length === 0)
    ) {
      return bad(i, 'must be more than 0 characters');
    }
    if (limit !== undefined && typeof text === 'string' && text.length > limit) {
      return bad(i, `must be less than ${limit + 1} characters`);
    }
    if (b.type === 'section' && text === undefined && !Array.isArray(b.fields))
      return bad(i, 'must provide text or fields');
    if (b.type === 'header' && (!isObj(b.text) || b.text.type !== 'plain_text'))
      return bad(i, 'header text must be plain_text');
    if (Array.isArray(b.fields) && b.fields.length > 10)
      return bad(i, 'no more than 10 fields allowed');
    if (Array.isArray(b.elements) && b.elements.length > (b.type === 'actions' ? 25 : 10))
      return bad(i, 'too many elements');
    const elementErr = b.type === 'actions' ? buttonsError(b.elements) : undefined;
    if (elementErr) return bad(i, elementErr);
    if (typeof b.block_id === 'string') {
      if (b.block_id.length > 255 || ids.has(b.block_id))
        return bad(i, 'invalid or duplicate block_id');
      ids.add(b.block_id);
    }
  }
  return undefined;
}

/** Slack's limits on buttons: a label of 75 characters, a URL of 3,000, a value of 2,000, unique action ids. */
function buttonsError(elements: unknown): string | undefined {
  if (!Array.isArray(elements) || elements.length === 0) return 'elements must not be empty';
  const ids = new Set<string>();
  for (const e of elements) {
    if (!isObj(e) || e.type !== 'button') continue;
    const label = isObj(e.text) ? e.text.text : undefined;
    if (typeof label !== 'string' || !label || label.length > 75) return 'invalid button text';
    if (typeof e.url === 'string' && e.url.length > 3000) return 'button url too long';
    if (typeof e.value === 'string' && e.value.length > 2000) return 'button value too long';
    const id = typeof e.action_id === 'string' ? e.action_id : '';
    if (id && ids.has(id)) return 'duplicate action_id';
    ids.add(id);
  }
  return undefined;
}

/** Slack gives every stored block a block_id, so blocks never read back byte-identical. */
function withBlockIds(blocks: unknown[]): unknown[] {
  return blocks.map((b) =>
    isObj(b) && b.block_id === undefined
      ? { ...b, block_id: randomBytes(3).toString('base64url') }
      : b,
  );
}
