/**
 * The fake Slack's HTTP side: its server and routing (Web API methods, uploads,
 * response_url posts, the OAuth authorize page), the checks before a method runs, faults,
 * rate limits and latency, and the recording of every call. The state it serves and the
 * test controls over it are FakeSlack's (../slack.ts), which extends this class.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { LatencyModel } from '../latency.ts';
import type { FakeSocketMode } from '../socket-mode.ts';
import { allowChoice, allowPage } from './allow-page.ts';
import { FileUploads } from './files.ts';
import { gate, scrubOAuth } from './gate.ts';
import { Faults, RateLimiter } from './limits.ts';
import { Messages } from './messages.ts';
import { type Approval, OAuth } from './oauth.ts';
import { reactionHandlers } from './reactions.ts';
import { Recorder } from './recorder.ts';
import { ResponseUrls } from './response-urls.ts';
import { Views } from './views.ts';
import { type Answer, fail, type Handler, type Json, parseArgs, send, str } from './wire.ts';
import { Workspaces } from './workspaces.ts';

/**
 * Where apps.connections.open sends a client: a FakeSocketMode, or anything handing out its
 * ticketed URLs (a benchmark runs the socket server in another process).
 */
export type SocketModeUrls = Pick<FakeSocketMode, 'connectionUrl'>;

export class SlackServer {
  protected readonly recorder = new Recorder();
  protected readonly workspaces = new Workspaces();
  protected readonly oauth = new OAuth(this.workspaces);
  /** Who is signed in to Slack in the browser that opens the Allow page, and what they do. */
  protected installer: Omit<Approval, 'scopes' | 'redirectUri'> & { deny?: boolean } = {
    team: 'T0001',
    user: 'U0001',
  };
  /** The authorize page asks the browser which workspace and waits for Allow (showAllowPage). */
  protected askInstaller = false;
  protected readonly messages = new Messages((c) => this.workspaces.channelOwner(c).team);
  protected readonly uploads = new FileUploads(this.messages, () => this.base);
  protected readonly viewState = new Views();
  /** Tokens Slack no longer accepts (revoked, app uninstalled): invalid_auth. */
  protected readonly revoked = new Set<string>();
  /** What auth.test reports in `x-oauth-scopes` (the bot token's granted scopes); unset: none. */
  protected grantedScopes: string[] | undefined;
  protected readonly responseUrls = new ResponseUrls();
  protected readonly faults = new Faults();
  protected readonly limiter = new RateLimiter();
  protected readonly latency = new LatencyModel();
  private readonly handlers: Map<string, Handler>;
  private readonly server: Server;
  private readonly socketMode: SocketModeUrls | undefined;
  protected base = '';

  protected constructor(socketMode: SocketModeUrls | undefined) {
    this.socketMode = socketMode;
    this.handlers = this.buildHandlers();
    this.server = createServer((req, res) => {
      this.route(req, res).catch((err: unknown) => {
        res.writeHead(500, { 'content-type': 'text/plain' }).end(String(err));
      });
    });
  }

  protected async listen(): Promise<void> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.base = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/`;
  }

  /** Web API base for SLACK_API_URL; WebClient appends the method name. */
  get url(): string {
    return `${this.base}api/`;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
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
    if (url.pathname === '/oauth/v2/authorize' && req.method === 'GET')
      return send(res, this.authorizeAnswer(url));
    send(res, { status: 404, body: 'not found' });
  }

  /** The authorize page: approved at once as `installer` says, or asked in the page. */
  private authorizeAnswer(url: URL): Answer {
    if (!this.askInstaller) return this.oauth.authorizePage(url.searchParams, this.installer);
    const choice = allowChoice(url.searchParams);
    if (!choice) return allowPage(url.pathname, url.searchParams, this.workspaces.list());
    const query = new URLSearchParams(url.searchParams);
    for (const k of ['team', 'user', 'approve', 'deny']) query.delete(k);
    const { team, user, deny } = choice;
    return this.oauth.authorizePage(query, { team, user, ...(deny ? { deny } : {}) });
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
    const authorization = req.headers.authorization ?? '';
    const token = /^Bearer (.+)$/.exec(authorization)?.[1] ?? str(args.token);
    delete args.token; // never keep secrets in recordings/dumps
    const handler = this.handlers.get(method);
    const { caller, team, refused, scopes } = gate(method, token, args, {
      workspaces: this.workspaces,
      revoked: this.revoked,
      grantedScopes: this.grantedScopes,
      triggerUser: (id) => this.viewState.triggerUser(id),
    });
    const basic = /^Basic (.+)$/.exec(authorization)?.[1];
    const work = (): Json =>
      method === 'oauth.v2.access'
        ? this.oauth.access(args, basic)
        : handler
          ? (refused ?? handler(args, caller))
          : fail('unknown_method');
    const fault = this.faults.take(method);
    if (fault?.tookEffect) work();
    const limited = fault ? undefined : this.limiter.limited(method, args, caller.team);
    // Slack names the token's scopes on every answer to a bot token it accepted.
    const scoped = scopes ? { 'x-oauth-scopes': scopes.join(',') } : undefined;
    const a = fault?.answer ??
      limited ?? { status: 200, body: work(), ...(scoped ? { headers: scoped } : {}) };
    // An OAuth call is recorded without its secrets (client secret, code, tokens).
    const kept =
      method === 'oauth.v2.access' ? scrubOAuth(args, a.body) : { args, response: a.body };
    this.answer(res, method, kept.args, a, kept.response, team);
  }

  private uploadBytes(id: string, req: IncomingMessage, body: Buffer, res: ServerResponse): void {
    const fault = this.faults.take('upload_url')?.answer;
    const type = req.headers['content-type'] ?? '';
    const { args, answer } = this.uploads.receive(id, type, body, fault);
    this.answer(res, 'upload_url', args, answer);
  }

  private responsePost(id: string, body: Buffer, res: ServerResponse): void {
    const fault = this.faults.take('response_url')?.answer;
    const { parsed, answer } = this.responseUrls.receive(id, body, fault);
    const delayMs = this.latency.next('response_url');
    const { status } = answer;
    this.recorder.responses.push({ id, body: parsed, status, delayMs, ...this.recorder.stamp() });
    sendAfter(res, answer, delayMs);
    this.recorder.notify();
  }

  /** Records the call (`recorded`: the answer as kept, when it holds secrets) and sends `a`. */
  private answer(
    res: ServerResponse,
    method: string,
    args: Json,
    a: Answer,
    recorded: unknown = a.body,
    team?: string,
  ): void {
    const delayMs = this.latency.next(method);
    const { status } = a;
    const response = recorded;
    const who = team === undefined ? {} : { team };
    this.recorder.calls.push({
      method,
      args,
      response,
      status,
      delayMs,
      ...who,
      ...this.recorder.stamp(),
    });
    sendAfter(res, a, delayMs);
    this.recorder.notify();
  }

  // ---- Web API methods ------------------------------------------------------------------------

  private buildHandlers(): Map<string, Handler> {
    return new Map<string, Handler>([
      ['auth.test', (_, caller) => this.workspaces.authTest(caller)],
      ['apps.connections.open', () => this.connectionsOpen()],
      ...this.messages.handlers(),
      ...reactionHandlers(this.messages),
      ...this.viewState.handlers(),
      ...this.uploads.handlers(),
    ]);
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
