/**
 * Driving a distributed bot (Harness.create({ distributed })) the way a browser and Slack
 * would: installs through /slack/install and Slack's Allow page, and requests from the
 * workspaces the fake Slack knows. Reading what the bot stored goes through a vault over the
 * bot's own store, with the bot's keys.
 */
import { afterEach } from 'vitest';
import { loadConfig } from '../../src/config/config.ts';
import type { Keyring } from '../../src/sealed.ts';
import type { Store } from '../../src/store/types.ts';
import { createVault, type Vault } from '../../src/workspaces/vault.ts';
import type { RecordedRequest } from '../fakes/api-emulator.ts';
import { eventCallback } from '../fakes/slack/events.ts';
import type { Approval, WorkspaceSpec } from '../fakes/slack.ts';
import type { DistributedOptions } from './distributed-env.ts';
import { Harness, SECRETS } from './harness.ts';
import { formEncode, postSigned, slashCommand, uniqueTs } from './slack-requests.ts';

export const GLOBEX = { id: 'E0G', name: 'Globex' };
export const ALPHA = {
  team: 'T0A',
  name: 'Alpha',
  botUser: 'U0ABOT',
  channels: ['C0A1', 'D0A1'],
  users: ['U0A1', 'U0A2'],
} satisfies WorkspaceSpec;
export const BETA = {
  team: 'T0B',
  name: 'Beta',
  botUser: 'U0BBOT',
  channels: ['C0B1'],
  users: ['U0B1'],
} satisfies WorkspaceSpec;
export const EAST = {
  team: 'T0G1',
  name: 'Globex East',
  enterprise: GLOBEX,
  botUser: 'U0G1BOT',
  channels: ['C0G1'],
  users: ['W0G1'],
} satisfies WorkspaceSpec;
export const WEST = {
  team: 'T0G2',
  name: 'Globex West',
  enterprise: GLOBEX,
  botUser: 'U0G2BOT',
  channels: ['C0G2'],
  users: ['W0G2'],
} satisfies WorkspaceSpec;

/** ALPHA's installer (its Docs Agent admin) in ALPHA's channel. */
export const A = { team: ALPHA.team, user: 'U0A1', channel: 'C0A1' };
/** BETA's installer in BETA's channel. */
export const B = { team: BETA.team, user: 'U0B1', channel: 'C0B1' };
/** Each workspace's docs project's own key: the API emulator answers 403 to it for any other. */
export const ALPHA_KEY = 'mint_alphaKEY_9f8e7d6c5b4a39281706';
export const BETA_KEY = 'mint_betaKEY_0a1b2c3d4e5f60718293';
/** The key a request to the API emulator was made with. */
export const keyOf = (r: Pick<RecordedRequest, 'authorization'>) =>
  r.authorization?.replace(/^Bearer /, '');

/**
 * The harness `current()` answers closed after each test, and the last `lines` of its log
 * printed when the test failed.
 */
export function closeAfterEach(current: () => Harness, lines = 40): void {
  afterEach(async (ctx) => {
    const h = current();
    if (ctx.task.result?.state === 'fail')
      console.error(h.logs.split('\n').slice(-lines).join('\n'));
    await h.close();
  });
}

export interface DistributedStart {
  /** The workspaces the fake Slack knows (ALPHA and BETA unless said). */
  workspaces?: WorkspaceSpec[];
  /** Projects the API emulator serves besides its own: each project's key, by its id. */
  projects?: Record<string, string>;
  env?: Record<string, string>;
  distributed?: DistributedOptions;
  /** What `Harness.start` is given. */
  start?: Parameters<Harness['start']>[0];
  /** People who install the app in their workspaces once it runs, in this order. */
  installs?: Pick<From, 'team' | 'user'>[];
}

/** A distributed bot running on the fake Slack and the API emulator, installed as asked. */
export async function startDistributed(
  engine: 'sqlite' | 'postgres',
  o: DistributedStart = {},
): Promise<Harness> {
  const h = await Harness.create({ engine, distributed: o.distributed ?? {}, env: o.env ?? {} });
  for (const ws of o.workspaces ?? [ALPHA, BETA]) h.slack.addWorkspace(ws);
  for (const [projectId, key] of Object.entries(o.projects ?? {})) h.api.addProject(projectId, key);
  await h.start(o.start);
  for (const who of o.installs ?? []) await install(h, { team: who.team, user: who.user });
  return h;
}

/** `who`'s workspace connected to a docs project, as the App Home's Connect would leave it. */
export function connectDocs(
  h: Harness,
  who: Pick<From, 'team' | 'user'>,
  projectId: string,
  apiKey: string,
) {
  return vaultOf(h).connectDocs({ teamId: who.team }, { projectId, apiKey, connectedBy: who.user });
}

/** ALPHA connected to proj_alpha with ALPHA_KEY, and BETA to proj_beta with BETA_KEY. */
export async function connectBoth(h: Harness): Promise<void> {
  await connectDocs(h, A, 'proj_alpha', ALPHA_KEY);
  await connectDocs(h, B, 'proj_beta', BETA_KEY);
}

/**
 * The bot with ALPHA and BETA installed by A and B, their projects served with their own keys
 * (proj_alpha, proj_beta, and `projects`), and both connected unless `connect` is false.
 */
export async function bothInstalled(
  engine: 'sqlite' | 'postgres',
  o: Omit<DistributedStart, 'installs'> & { connect?: boolean } = {},
): Promise<Harness> {
  const projects = { proj_alpha: ALPHA_KEY, proj_beta: BETA_KEY, ...o.projects };
  const h = await startDistributed(engine, { ...o, projects, installs: [A, B] });
  if (o.connect !== false) await connectBoth(h);
  return h;
}

export interface InstallRun {
  /** The answer to GET /slack/install. */
  start: Response;
  /** The state cookie it set (`name=value`). */
  cookie: string;
  /** Where Slack's Allow page sent the browser back: the callback with code and state. */
  back: string;
  status: number;
  html: string;
}

/** A person installs the app in a browser: /slack/install, Slack's Allow page, the callback. */
export async function install(
  h: Harness,
  who: Omit<Approval, 'scopes' | 'redirectUri'>,
  o: { withCookie?: boolean } = {},
): Promise<InstallRun> {
  h.slack.installAs(who);
  const start = await fetch(h.url('/slack/install'), { redirect: 'manual' });
  const cookie = (start.headers.get('set-cookie') ?? '').split(';')[0] ?? '';
  const allow = await fetch(start.headers.get('location') ?? '', { redirect: 'manual' });
  const back = allow.headers.get('location') ?? '';
  const done = await callback(h, back, o.withCookie === false ? undefined : cookie);
  return { start, cookie, back, ...done };
}

/** GET on the bot's OAuth callback, with a cookie or none. */
export async function callback(
  h: Harness,
  url: string,
  cookie: string | undefined,
): Promise<{ status: number; html: string }> {
  const res = await fetch(url.replace(/^https?:\/\/[^/]+/, h.url('')), {
    redirect: 'manual',
    ...(cookie ? { headers: { cookie } } : {}),
  });
  return { status: res.status, html: await res.text() };
}

/** The running bot's keys (ENCRYPTION_KEYS as it parsed them). */
export function keyringOf(h: Harness): Keyring {
  const r = loadConfig(h.env);
  const keys = r.ok ? r.config.workspaces.encryptionKeys : undefined;
  if (!keys) throw new Error('the harness is not distributed');
  return keys;
}

/** A vault over the running bot's own store, with its keys: what the bot stored, opened. */
export function vaultOf(h: Harness): Vault {
  if (!h.botStore) throw new Error('the bot is not running');
  return createVault(h.botStore, keyringOf(h), { retentionDays: 30 });
}

/** Where a request comes from: a workspace (in an org, and through an org-wide install). */
export interface From {
  team: string;
  user: string;
  channel?: string;
  enterprise?: string;
  orgWide?: boolean;
}

/** A slash command from a workspace, signed as Slack sends it; returns the ack. */
export async function commandFrom(h: Harness, from: From, text: string, command = '/agent') {
  const responseId = `cmd-${Math.random().toString(36).slice(2)}`;
  const fields = {
    ...slashCommand({
      text,
      command,
      team_id: from.team,
      user_id: from.user,
      channel_id: from.channel ?? 'C0000',
      response_url: h.slack.responseUrl(responseId),
    }),
    ...(from.enterprise ? { enterprise_id: from.enterprise } : {}),
    is_enterprise_install: String(from.orgWide === true),
  };
  const res = await postSigned(h.eventsUrl, SECRETS.signingSecret, { body: formEncode(fields) });
  const body = (res.json ?? null) as Record<string, unknown> | null;
  return { status: res.status, body, responseId };
}

/** Posts events Slack sends (the fake's uninstall events), signed. */
export async function deliver(h: Harness, events: Record<string, unknown>[]): Promise<number[]> {
  const statuses: number[] = [];
  for (const e of events)
    statuses.push(
      (await postSigned(h.eventsUrl, SECRETS.signingSecret, { body: JSON.stringify(e) })).status,
    );
  return statuses;
}

/** An agent job being watched in a workspace's channel (its next poll an hour away). */
export async function activeJob(store: Store, team: string, channel: string) {
  const now = Date.now();
  const ts = `${(now / 1000).toFixed(6)}`;
  const t = await store.createThread(
    { teamId: team, channelId: channel, threadTs: ts, userId: 'U0', prompt: 'Add a page' },
    now,
  );
  const job = { jobId: `job_${team}_${t.id}`, status: 'active' as const };
  const snapshot = { ...job, model: null, repository: null, ref: null, prLink: null };
  return store.attachJob(
    t.id,
    snapshot,
    { nextPollAt: now + 3_600_000, pollIntervalMs: 5_000 },
    now,
  );
}

/** An Events API event from a workspace, signed. */
export function eventFrom(h: Harness, from: From, event: Record<string, unknown>) {
  const body = eventCallback(event, {
    team_id: from.team,
    ...(from.enterprise ? { enterprise_id: from.enterprise } : {}),
    is_enterprise_install: from.orgWide === true,
  });
  return postSigned(h.eventsUrl, SECRETS.signingSecret, { body: JSON.stringify(body) });
}

/** A person opens the app's Home tab. */
export function homeOpened(user: string): Record<string, unknown> {
  return {
    type: 'app_home_opened',
    user,
    channel: `D${user.slice(1)}`,
    tab: 'home',
    event_ts: `${(Date.now() / 1000).toFixed(6)}`,
  };
}

/** A person mentions the bot in a channel, or writes to it in a DM. */
export function said(
  kind: 'app_mention' | 'message',
  from: Required<Pick<From, 'user' | 'channel'>>,
  text: string,
): Record<string, unknown> {
  const ts = uniqueTs();
  return {
    type: kind,
    user: from.user,
    text,
    ts,
    channel: from.channel,
    event_ts: ts,
    ...(kind === 'message'
      ? { channel_type: from.channel.startsWith('D') ? 'im' : 'channel' }
      : {}),
  };
}

/**
 * A person of a workspace replies in a thread: the message lands in the fake Slack, then
 * Slack sends the event from that workspace. Answers the message's ts and the HTTP status.
 */
export async function replyFrom(
  h: Harness,
  from: Required<Pick<From, 'team' | 'user' | 'channel'>> & Pick<From, 'enterprise'>,
  threadTs: string,
  text: string,
): Promise<{ ts: string; status: number }> {
  const { ts } = h.slack.addUserMessage({
    channel: from.channel,
    user: from.user,
    text,
    thread_ts: threadTs,
  });
  const res = await eventFrom(h, from, threadReply(from, threadTs, text, ts));
  return { ts, status: res.status };
}

/** A person's reply in a thread, as Slack sends the `message` event (`ts` now unless given). */
export function threadReply(
  from: Required<Pick<From, 'user' | 'channel'>>,
  threadTs: string,
  text: string,
  ts = uniqueTs(),
): Record<string, unknown> {
  return {
    type: 'message',
    user: from.user,
    text,
    ts,
    thread_ts: threadTs,
    channel: from.channel,
    channel_type: from.channel.startsWith('D') ? 'im' : 'channel',
    event_ts: ts,
  };
}
