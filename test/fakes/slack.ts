/**
 * A fake Slack Web API on 127.0.0.1 for integration tests. It speaks the wire format that
 * @slack/web-api sends (form-encoded or JSON POSTs, Bearer tokens, JSON-encoded fields) and keeps
 * per-channel state, so the bot under test meets Slack's real refusals (not_in_channel,
 * message_not_found, already_reacted, invalid_blocks, 429 Retry-After…) instead of a yes-machine.
 *
 * This file is the HTTP server, its routing and the test controls; the rest lives in ./slack/:
 * recorder.ts (the calls made, and waiting for them), messages.ts (chat.*, conversations.*),
 * reactions.ts, views.ts (modals and the Home tab), files.ts (the upload flow), limits.ts
 * (faults and rate limits), checks.ts (Slack's checks of what is sent) and wire.ts (the wire
 * format and the workspace's ids).
 */
import { randomBytes } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { dirname } from 'node:path';
import { type Latency, LatencyModel, type LatencyProfile } from './latency.ts';
import { FileUploads } from './slack/files.ts';
import {
  type Fault,
  Faults,
  RateLimiter,
  type RateLimits,
  SLACK_RATE_LIMITS,
} from './slack/limits.ts';
import { Messages, type StoredMessage } from './slack/messages.ts';
import { reactionHandlers } from './slack/reactions.ts';
import { type RecordedCall, type RecordedResponse, Recorder } from './slack/recorder.ts';
import { Views } from './slack/views.ts';
import {
  type Answer,
  authError,
  fail,
  isObj,
  type Json,
  parseArgs,
  SLACK_IDS,
  send,
  str,
} from './slack/wire.ts';
import type { FakeSocketMode } from './socket-mode.ts';

export type { StoredFile } from './slack/files.ts';
export { type Fault, type RateLimits, SLACK_RATE_LIMITS } from './slack/limits.ts';
export type { Ephemeral, Reaction, StoredMessage } from './slack/messages.ts';
export type { RecordedCall, RecordedResponse } from './slack/recorder.ts';
export { type Json, SLACK_IDS } from './slack/wire.ts';

const { team: TEAM, botUser: BOT, botId: BOT_ID } = SLACK_IDS;

/**
 * Where apps.connections.open sends a client: a FakeSocketMode, or anything handing out its
 * ticketed URLs (a benchmark runs the socket server in another process).
 */
export type SocketModeUrls = Pick<FakeSocketMode, 'connectionUrl'>;

export class FakeSlack {
  private readonly recorder = new Recorder();
  readonly calls = this.recorder.calls;
  readonly responses = this.recorder.responses;
  private readonly messages = new Messages();
  private readonly uploads = new FileUploads(this.messages, () => this.base);
  private readonly viewState = new Views();
  readonly files = this.uploads.files;
  readonly ephemerals = this.messages.ephemerals;
  /** Modals opened with views.open, and for whom (the trigger's user). */
  readonly views = this.viewState.views;
  /** Replies whose thread_ts names no message: Slack answers ok but nobody ever sees them. */
  readonly orphans = this.messages.orphans;
  /** Tokens Slack no longer accepts (revoked, app uninstalled): invalid_auth. */
  private readonly revoked = new Set<string>();
  /** What auth.test reports in `x-oauth-scopes` (the bot token's granted scopes); unset: none. */
  private grantedScopes: string[] | undefined;
  /** The Home tab each user sees, as views.publish last set it. */
  readonly homeViews = this.viewState.homeViews;
  private readonly responseUses = new Map<string, number>();
  private readonly faults = new Faults();
  private readonly limiter = new RateLimiter();
  private readonly latency = new LatencyModel();
  private readonly handlers: Map<string, (a: Json) => Json>;
  private readonly server: Server;
  private readonly socketMode: SocketModeUrls | undefined;
  private base = '';

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
    return this.recorder.callsTo(method);
  }

  waitFor(predicate: (c: RecordedCall) => boolean, timeoutMs = 5000): Promise<RecordedCall> {
    return this.recorder.waitFor(predicate, timeoutMs);
  }

  waitForCalls(method: string, count: number, timeoutMs = 5000): Promise<RecordedCall[]> {
    return this.recorder.waitForCalls(method, count, timeoutMs);
  }

  waitForResponse(
    predicate: (r: RecordedResponse) => boolean = () => true,
    timeoutMs = 5000,
  ): Promise<RecordedResponse> {
    return this.recorder.waitForResponse(predicate, timeoutMs);
  }

  failNext(method: string, fault: Fault, times = 1): void {
    this.faults.add(method, fault, times);
  }

  /**
   * Every answer of `method` is sent that much later (0 for none), like a slow Slack: the
   * call takes effect (and is recorded) at once, so a client that dies meanwhile posted
   * without knowing it. `'*'` sets every method without a latency of its own, response_url
   * posts (`'response_url'`) and uploads (`'upload_url'`) included. With `{ ms, jitter }`
   * each answer takes ms ± jitter × ms, the same sequence in every run (test/fakes/latency.ts).
   */
  setLatency(method: string, latency: Latency): void {
    this.latency.set(method, latency);
  }

  /** A benchmark's latency profile: its Slack delay for every call (`'*'`). */
  useLatency(profile: LatencyProfile): void {
    this.latency.set('*', profile.slack);
  }

  /** Restarts the jitter sequence from `seed` (default 1): the same calls get the same delays. */
  seedLatency(seed: number): void {
    this.latency.reseed(seed);
  }

  /**
   * From now on, answer like Slack does past its limits: a chat.postMessage beyond the
   * channel's pace, or a chat.update beyond the workspace's Tier 3 budget, gets HTTP 429
   * with `Retry-After` (whole seconds) and does nothing. Refused calls do not count. Off by
   * default; `false` turns it off again. `now` is the clock the buckets refill on.
   */
  enforceRateLimits(limits: RateLimits | false = SLACK_RATE_LIMITS, now = Date.now): void {
    this.limiter.enforce(limits, now);
  }

  /**
   * The scopes the bot token was granted, as Slack reports them in auth.test's (and every
   * call's) `x-oauth-scopes` header; leave one out to see the doctor name it.
   */
  grantScopes(scopes: readonly string[] | undefined): void {
    this.grantedScopes = scopes ? [...scopes] : undefined;
  }

  /**
   * From now on an upload's message appears in the channel `ms` after the upload completes
   * (Slack shares files asynchronously); 0, the default, shows it at once.
   */
  delayShares(ms: number): void {
    this.uploads.shareDelayMs = ms;
  }

  /** From now on Slack answers `invalid_auth` for this token (revoked, or the app uninstalled). */
  revokeToken(token: string): void {
    this.revoked.add(token);
  }

  /** Kick the bot out of a channel: posts there now fail with not_in_channel, as in Slack. */
  removeBot(channel: string): void {
    this.messages.removeBot(channel);
  }

  addBot(channel: string): void {
    this.messages.addBot(channel);
  }

  /** What conversations.info calls the channel (default: `channel-<id in lower case>`). */
  nameChannel(channel: string, name: string): void {
    this.messages.nameChannel(channel, name);
  }

  /** The channel is deleted (or never existed): channel_not_found for every call naming it. */
  deleteChannel(channel: string): void {
    this.messages.deleteChannel(channel);
  }

  /** A response_url as Slack hands out with slash commands; only issued ids accept POSTs. */
  responseUrl(id: string = randomBytes(6).toString('hex')): string {
    this.responseUses.set(id, this.responseUses.get(id) ?? 0);
    return `${this.base}response/${id}`;
  }

  /** A trigger id as Slack sends with an interaction by `user`: good for one views.open within 3 s. */
  issueTriggerId(user: string, issuedAt = Date.now()): string {
    return this.viewState.issueTriggerId(user, issuedAt);
  }

  addUserMessage(m: { channel: string; user: string; text: string; thread_ts?: string }): {
    ts: string;
  } {
    return this.messages.addUserMessage(m);
  }

  /** The channels holding messages, in the order they were first written to. */
  channels(): string[] {
    return this.messages.channelIds();
  }

  /** Channel history in posting order, thread replies included. */
  history(channel: string): StoredMessage[] {
    return this.messages.history(channel);
  }

  /** A thread (root first) as conversations.replies would list it, or [] when unknown. */
  thread(channel: string, ts: string): StoredMessage[] {
    return this.messages.thread(channel, ts);
  }

  async dump(file: string): Promise<void> {
    const files = [...this.files.values()].map((f) => ({
      id: f.id,
      name: f.name,
      mimetype: f.mimetype,
      base64: f.bytes.toString('base64'),
    }));
    const { calls, responses } = this;
    const messages = this.messages.humanMessages;
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
    const fault = this.faults.take(method);
    if (fault?.tookEffect) work();
    const limited = fault ? undefined : this.limiter.limited(method, args);
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
    const fault = this.faults.take('upload_url')?.answer;
    const type = req.headers['content-type'] ?? '';
    const { args, answer } = this.uploads.receive(id, type, body, fault);
    this.answer(res, 'upload_url', args, answer);
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
      this.faults.take('response_url')?.answer ??
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
    const delayMs = this.latency.next('response_url');
    const { status } = answer;
    this.responses.push({ id, body: parsed, status, delayMs, ...this.recorder.stamp() });
    sendAfter(res, answer, delayMs);
    this.recorder.notify();
  }

  private answer(res: ServerResponse, method: string, args: Json, a: Answer): void {
    const delayMs = this.latency.next(method);
    const { body: response, status } = a;
    this.calls.push({ method, args, response, status, delayMs, ...this.recorder.stamp() });
    sendAfter(res, a, delayMs);
    this.recorder.notify();
  }

  // ---- Web API methods ------------------------------------------------------------------------

  private buildHandlers(): Map<string, (a: Json) => Json> {
    return new Map<string, (a: Json) => Json>([
      ['auth.test', () => this.authTest()],
      ['apps.connections.open', () => this.connectionsOpen()],
      ...this.messages
        .handlers()
        .map(([method, handle]): [string, (a: Json) => Json] => [
          method,
          method === 'conversations.info' ? (a) => this.readScopeError(a) ?? handle(a) : handle,
        ]),
      ...reactionHandlers(this.messages),
      ...this.viewState.handlers(),
      ...this.uploads.handlers(),
    ]);
  }

  /**
   * conversations.info needs channels:read (groups:read for a private channel): once the
   * granted scopes are set (grantScopes), a token without it gets missing_scope, as in Slack.
   */
  private readScopeError(a: Json): Json | undefined {
    const needed = str(a.channel)?.startsWith('G') ? 'groups:read' : 'channels:read';
    if (!this.grantedScopes || this.grantedScopes.includes(needed)) return undefined;
    return { ...fail('missing_scope'), needed, provided: this.grantedScopes.join(',') };
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
}

function sendAfter(res: ServerResponse, a: Answer, delayMs: number): void {
  if (delayMs > 0) setTimeout(() => !res.destroyed && send(res, a), delayMs);
  else send(res, a);
}
