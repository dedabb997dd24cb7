/**
 * A fake Slack Web API on 127.0.0.1 for integration tests. It speaks the wire format that
 * @slack/web-api sends (form-encoded or JSON POSTs, Bearer tokens, JSON-encoded fields) and keeps
 * per-channel state, so the bot under test meets Slack's real refusals (not_in_channel,
 * message_not_found, already_reacted, invalid_blocks, 429 Retry-After…) instead of a yes-machine.
 *
 * It knows several workspaces (and Enterprise Grid orgs), each with its channels, people and
 * bot token, and the app's OAuth: the Allow page hands out codes that oauth.v2.access
 * exchanges for tokens, rotating ones when token rotation is on.
 *
 * This file is the test controls; the rest lives in ./slack/: server.ts (the HTTP server, its
 * routing, and what every call goes through), recorder.ts (the calls made, and waiting for them), messages.ts (chat.*, conversations.*),
 * reactions.ts, views.ts (modals and the Home tab), files.ts (the upload flow), limits.ts
 * (faults and rate limits), checks.ts (Slack's checks of what is sent), workspaces.ts (the
 * workspaces, installs and tokens), gate.ts (the token and workspace checks before a method
 * runs), oauth.ts (the Allow page and oauth.v2.access), events.ts (Events API envelopes,
 * app_uninstalled, tokens_revoked), response-urls.ts and wire.ts (the wire format and the
 * default workspace's ids).
 */
import { randomBytes } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { Latency, LatencyProfile } from './latency.ts';
import { appUninstalledEvent, tokensRevokedEvent } from './slack/events.ts';
import { type Fault, type RateLimits, SLACK_RATE_LIMITS } from './slack/limits.ts';
import type { StoredMessage } from './slack/messages.ts';
import type { AppConfig, Approval } from './slack/oauth.ts';
import type { RecordedCall, RecordedResponse } from './slack/recorder.ts';
import { SlackServer, type SocketModeUrls } from './slack/server.ts';
import type { Workspace, WorkspaceSpec } from './slack/workspaces.ts';

export type { StoredFile } from './slack/files.ts';
export { type Fault, type RateLimits, SLACK_RATE_LIMITS } from './slack/limits.ts';
export type { Ephemeral, Reaction, StoredMessage } from './slack/messages.ts';
export type { AppConfig, Approval } from './slack/oauth.ts';
export type { RecordedCall, RecordedResponse } from './slack/recorder.ts';
export type { SocketModeUrls } from './slack/server.ts';
export { type Json, SLACK_APP, SLACK_IDS } from './slack/wire.ts';
export type { Workspace, WorkspaceSpec } from './slack/workspaces.ts';

export class FakeSlack extends SlackServer {
  readonly calls = this.recorder.calls;
  readonly responses = this.recorder.responses;
  readonly files = this.uploads.files;
  readonly ephemerals = this.messages.ephemerals;
  /** Modals opened with views.open, and for whom (the trigger's user). */
  readonly views = this.viewState.views;
  /** Replies whose thread_ts names no message: Slack answers ok but nobody ever sees them. */
  readonly orphans = this.messages.orphans;
  /** The Home tab each user sees, as views.publish last set it. */
  readonly homeViews = this.viewState.homeViews;

  static async start(opts: { socketMode?: SocketModeUrls } = {}): Promise<FakeSlack> {
    const fake = new FakeSlack(opts.socketMode);
    await fake.listen();
    return fake;
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

  // ---- workspaces and OAuth ------------------------------------------------------------------

  /**
   * Another workspace (optionally in an Enterprise Grid org), with the app installed: its
   * channels and people are its own (another workspace's token gets channel_not_found), and
   * so is its bot token, returned here. Channels and people no workspace lists are the
   * default workspace's (SLACK_IDS), whose token is any xoxb- the fake did not issue.
   */
  addWorkspace(spec: WorkspaceSpec): Workspace & { botToken: string } {
    return this.workspaces.add(spec);
  }

  /** The app's credentials (SLACK_APP), Redirect URLs and token rotation. */
  get app(): Readonly<AppConfig> {
    return this.oauth.app;
  }

  /** Sets the app's Redirect URLs (OAuth & Permissions) or turns token rotation on. */
  configureApp(o: Partial<Pick<AppConfig, 'redirectUrls' | 'tokenRotation'>>): void {
    Object.assign(this.oauth.app, o);
  }

  /**
   * What clicking Allow on Slack's authorize page does: a one-time code (10 minutes) that
   * oauth.v2.access exchanges for the install's token. `redirectUri`: the one the authorize
   * URL carried, which the exchange must repeat.
   */
  authorize(a: Approval): string {
    return this.oauth.authorize(a);
  }

  /** Slack's authorize page (Bolt's `authorizationUrl`): it redirects back as `installAs` says. */
  get authorizeUrl(): string {
    return `${this.base}oauth/v2/authorize`;
  }

  /** Who opens the authorize page, signed in where (default U0001 in T0001), and whether they deny. */
  installAs(who: Omit<Approval, 'scopes' | 'redirectUri'> & { deny?: boolean }): void {
    this.installer = who;
  }

  /**
   * From now on the authorize page is the one a person meets in a browser: it lists the
   * workspaces to install in and waits for Allow (test/fakes/slack/allow-page.ts), instead
   * of approving at once as `installAs` says.
   */
  showAllowPage(on = true): void {
    this.askInstaller = on;
  }

  /** The workspace a person belongs to (the default one for anyone no workspace lists). */
  workspaceOf(user: string): Workspace {
    return this.workspaces.userOwner(user);
  }

  /** Moves the fake's clock on (token and code expiry), as if that much time had passed. */
  advanceClock(ms: number): void {
    this.workspaces.advance(ms);
  }

  /** From now on the issued token answers `token_expired`. */
  expireToken(token: string): void {
    this.workspaces.expire(token);
  }

  /**
   * The app is uninstalled from the workspace (or, `enterprise`, from the org it was installed
   * in org-wide): its tokens stop working. Answers the events Slack then sends the app, to be
   * POSTed signed: tokens_revoked and app_uninstalled.
   */
  uninstall(where: { team: string } | { enterprise: string }): Record<string, unknown>[] {
    const key = 'team' in where ? where.team : where.enterprise;
    const install = this.workspaces.uninstall(key);
    if (!install) throw new Error(`uninstall: the app is not installed in ${key}`);
    const place = {
      team_id: key,
      bot_user: install.botUser,
      is_enterprise_install: install.orgWide,
      ...(install.enterprise ? { enterprise_id: install.enterprise.id } : {}),
    };
    return [tokensRevokedEvent(place, { bot: [install.botUser] }), appUninstalledEvent(place)];
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
    this.responseUrls.issue(id);
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
}
