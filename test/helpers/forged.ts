/**
 * Two workspaces of one distributed bot, ALPHA and BETA, both installed and connected, and
 * ALPHA holding things a forged payload might reach for: a job being watched (known to the
 * API emulator), a start that failed and may be retried, a channel bound to a project, and a
 * content gap of its project. BETA's person sends payloads signed as Slack signs them, with
 * BETA's team, app and authorization, that name ALPHA's ids. `alphaUntouched` says that
 * nothing of ALPHA changed: its rows, its job at the API, and no Slack call with its token.
 */
import { LogLevel, WebClient } from '@slack/web-api';
import SqliteDatabase from 'better-sqlite3';
import pg from 'pg';
import { expect } from 'vitest';
import type { JobThread } from '../../src/store/types.ts';
import { eventCallback } from '../fakes/slack/events.ts';
import { SLACK_APP } from '../fakes/slack.ts';
import { A, ALPHA, B, BETA, bothInstalled, type From, vaultOf } from './distributed.ts';
import { type Harness, SECRETS } from './harness.ts';
import { quiet, sleep } from './net.ts';
import { postSigned } from './slack-requests.ts';

type Json = Record<string, unknown>;

export { A, ALPHA_KEY, B, BETA_KEY } from './distributed.ts';
/** BETA's person, naming ALPHA's channel. */
export const B_IN_A = { ...B, channel: A.channel };

export interface Alpha {
  /** The job being watched, its root, and its id at the API. */
  active: JobThread;
  jobId: string;
  /** A start that failed and offers Retry. */
  failed: JobThread;
  gapId: number;
}

/** The bot with ALPHA and BETA installed and connected, and ALPHA's things seeded. */
export async function twoWorkspaces(
  engine: 'sqlite' | 'postgres',
): Promise<{ h: Harness; alpha: Alpha }> {
  const h = await bothInstalled(engine);
  const store = h.botStore!;
  const now = Date.now();
  const thread = async (prompt: string) =>
    store.createThread(
      {
        teamId: A.team,
        channelId: A.channel,
        threadTs: await alphaRoot(h),
        userId: A.user,
        prompt,
      },
      now,
    );
  const watched = await thread('Document the SSO setup');
  const jobId = `job_alpha_${watched.id}`;
  h.api.setJob(jobId, { status: 'active', messages: ['Document the SSO setup'] });
  const job = { jobId, status: 'active' as const, model: null, repository: null, ref: null };
  const schedule = { nextPollAt: now + 3_600_000, pollIntervalMs: 5_000 };
  const active = await store.attachJob(watched.id, { ...job, prLink: null }, schedule, now);
  const failing = await thread('Add a changelog page');
  const failed = (await store.startFailed(failing.id, 'the API was down', now, 'safe'))!;
  await store.bindChannelProject({
    teamId: A.team,
    channelId: A.channel,
    projectId: 'proj_alpha',
    setBy: A.user,
    setAt: now,
  });
  // Alpha's own gap (distributed mode: the bot's state is per workspace).
  const [gap] = await store.addGaps(
    { teamId: A.team },
    [
      {
        projectId: 'proj_alpha',
        key: 'okta sso',
        kind: 'question',
        signatures: ['okta sso'],
        title: 'Alpha secret roadmap: Okta SSO',
        evidence: '{}',
        evidenceTo: '2026-11-08',
      },
    ],
    now,
  );
  // The roots' first edits, and anything else the seeding set off (the Home's refresh comes
  // its debounce of 1 s after them), are done before a test looks.
  const alphaCalls = () => h.slack.calls.filter((c) => c.team === A.team).length;
  await quiet(alphaCalls, 1_200, "ALPHA's Slack calls");
  return { h, alpha: { active, jobId, failed, gapId: gap!.id } };
}

/** A root message in ALPHA's channel, posted with ALPHA's own token (as the bot posts one). */
async function alphaRoot(h: Harness): Promise<string> {
  const found = await vaultOf(h).findInstallation({ teamId: A.team });
  const token = (found?.body as { bot?: { token: string } } | undefined)?.bot?.token;
  if (!token) throw new Error('ALPHA is not installed');
  const client = new WebClient(token, {
    slackApiUrl: h.slack.url,
    retryConfig: { retries: 0 },
    logLevel: LogLevel.ERROR,
  });
  return (await client.chat.postMessage({ channel: A.channel, text: ':hourglass: Starting' })).ts!;
}

/** ALPHA's rows, read beside the bot: what no forged payload may change. */
export async function alphaRows(h: Harness): Promise<Json> {
  const q = {
    threads: `select * from job_threads where team_id = '${A.team}' order by id`,
    followUps: `select f.* from follow_ups f join job_threads t on t.id = f.thread_id where t.team_id = '${A.team}' order by f.id`,
    outbox: `select o.* from outbox o join job_threads t on t.id = o.thread_id where t.team_id = '${A.team}' order by o.id`,
    projects: `select * from channel_projects where team_id = '${A.team}'`,
    docs: `select * from docs_connections where team_id = '${A.team}'`,
    gaps: `select * from insight_gaps where project_id = 'proj_alpha' order by id`,
  };
  const out: Json = {};
  for (const [name, sql] of Object.entries(q)) out[name] = await rows(h, sql);
  return out;
}

async function rows(h: Harness, sql: string): Promise<unknown[]> {
  const url = h.env.DATABASE_URL ?? '';
  if (url.startsWith('sqlite:')) {
    const db = new SqliteDatabase(url.slice('sqlite:'.length), { readonly: true });
    try {
      return db.prepare(sql).all();
    } finally {
      db.close();
    }
  }
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(sql)).rows;
  } finally {
    await client.end();
  }
}

/** Where ALPHA stands before a forged payload: its rows, and how many Slack calls it had. */
export async function alphaBefore(h: Harness) {
  return { rows: await alphaRows(h), calls: h.slack.calls.length, api: h.api.requests.length };
}

/**
 * Nothing of ALPHA changed since `before`: its rows are the same, no Slack call was made
 * with its token, and the API was asked nothing of its job, project or key.
 */
export async function alphaUntouched(h: Harness, before: Awaited<ReturnType<typeof alphaBefore>>) {
  await sleep(400); // whatever the payload queued has run by now
  expect(await alphaRows(h)).toEqual(before.rows);
  const calls = h.slack.calls.slice(before.calls).filter((c) => c.team === A.team);
  expect(calls.map((c) => [c.method, c.args.channel])).toEqual([]);
  const api = h.api.requests
    .slice(before.api)
    .filter((r) => /alpha/i.test(`${r.path} ${r.authorization ?? ''}`));
  expect(api.map((r) => [r.method, r.path])).toEqual([]);
}

/** The `workspace.refused` lines logged so far. */
export const refusedLines = (h: Harness) =>
  h.logLines().filter((l) => l.msg === 'workspace.refused');

/**
 * An Events API event, signed. `envelopeTeam` forges the envelope's team while Slack's
 * authorization stays BETA's install (what Bolt authorizes by).
 */
export function betaEvent(h: Harness, event: Json, o: { envelopeTeam?: string } = {}) {
  const body = eventCallback(event, { team_id: B.team, bot_user: BETA.botUser });
  if (o.envelopeTeam) {
    body.team_id = o.envelopeTeam;
    body.context_team_id = o.envelopeTeam;
  }
  return postSigned(h.eventsUrl, SECRETS.signingSecret, { body: JSON.stringify(body) });
}

/**
 * What every interaction of a person of a workspace outside any org carries, as Slack sends
 * it: the team (its `domain`), the app, the person, and a trigger of theirs.
 */
export function payloadBase(h: Harness, from: From, domain: string): Json {
  return {
    user: { id: from.user, username: 'someone', name: 'someone', team_id: from.team },
    api_app_id: SLACK_APP.appId,
    token: 'legacy-verification-token',
    trigger_id: h.slack.issueTriggerId(from.user),
    team: { id: from.team, domain },
    enterprise: null,
    is_enterprise_install: false,
  };
}

/** What every interaction of BETA's person carries. */
const betaBase = (h: Harness) => payloadBase(h, B, 'beta');

/**
 * A click by BETA's person on a message of ALPHA's channel (`at`), with `action` as Slack
 * sends it (a button's value, an overflow's option). Answers the ack and its response id.
 */
export async function betaClick(
  h: Harness,
  action: Json,
  at: { channel: string; messageTs: string },
) {
  const responseId = `click-${Math.random().toString(36).slice(2)}`;
  const payload = {
    type: 'block_actions',
    ...betaBase(h),
    container: { type: 'message', message_ts: at.messageTs, channel_id: at.channel },
    channel: { id: at.channel, name: 'docs' },
    message: { type: 'message', ts: at.messageTs, user: ALPHA.botUser },
    state: { values: {} },
    response_url: h.slack.responseUrl(responseId),
    actions: [{ block_id: 'b', action_ts: `${(Date.now() / 1000).toFixed(6)}`, ...action }],
  };
  return { ...(await h.interact(payload)), responseId };
}

/** A form submitted by BETA's person: the callback id, its metadata and its inputs. */
export function betaSubmit(
  h: Harness,
  callbackId: string,
  metadata: string,
  values: Record<string, Record<string, string>>,
) {
  const state = Object.fromEntries(
    Object.entries(values).map(([block, inputs]) => [
      block,
      Object.fromEntries(
        Object.entries(inputs).map(([k, value]) => [k, { type: 'plain_text_input', value }]),
      ),
    ]),
  );
  return h.interact({
    type: 'view_submission',
    ...betaBase(h),
    view: {
      id: `V${Math.random().toString(36).slice(2, 10).toUpperCase()}`,
      team_id: B.team,
      type: 'modal',
      callback_id: callbackId,
      private_metadata: metadata,
      state: { values: state },
      app_id: SLACK_APP.appId,
    },
    response_urls: [],
  });
}

/** What BETA's person was told through a response_url. */
export function toldThrough(h: Harness, responseId: string): string {
  return JSON.stringify(h.slack.responses.filter((r) => r.id === responseId).map((r) => r.body));
}
