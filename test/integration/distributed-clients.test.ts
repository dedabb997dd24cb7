/**
 * Distributed mode, what the bot posts outside any request: the notifier's announcements
 * and root updates go to each workspace with its own install's token (a team served by its
 * org's org-wide install, with the org's), a rotating token past its time is refreshed
 * first, and a workspace with no install any more has its pending work settled in one line.
 * Thread replies are read with the workspace's own bot user. The real bot over HTTP against
 * the fake Slack, which answers channel_not_found to another workspace's token, on both
 * engines.
 *
 * The store is seeded with jobs whose completion is recorded, as a poll records it, while
 * the bot is stopped; its notifier's first pass at start picks them up (jobs run end to end
 * with each workspace's docs key in distributed-docs-api.test.ts).
 */
import { LogLevel, WebClient } from '@slack/web-api';
import SqliteDatabase from 'better-sqlite3';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { NOT_INSTALLED } from '../../src/chat-errors.ts';
import type { Store } from '../../src/store/types.ts';
import { createVault, type Vault } from '../../src/workspaces/vault.ts';
import {
  ALPHA,
  BETA,
  closeAfterEach,
  deliver,
  EAST,
  eventFrom,
  GLOBEX,
  install,
  keyringOf,
  startDistributed,
} from '../helpers/distributed.ts';
import type { Harness } from '../helpers/harness.ts';
import { eventually, sleep } from '../helpers/net.ts';
import { uniqueTs } from '../helpers/slack-requests.ts';
import { engineKinds } from '../helpers/store-engines.ts';

let h: Harness;
closeAfterEach(() => h);

async function start(engine: 'sqlite' | 'postgres', tokenRotation = false): Promise<void> {
  h = await startDistributed(engine, {
    distributed: { tokenRotation },
    workspaces: [ALPHA, BETA, EAST],
  });
}

interface Where {
  team: string;
  channel: string;
  /** Who asked for the job (their Home follows it). */
  user: string;
  enterprise?: string;
}

/** The bot's token for a workspace, as its install holds it (what a test posts roots with). */
async function tokenOf(vault: Vault, w: Where): Promise<string> {
  const found = await vault.findInstallation({ teamId: w.team, enterpriseId: w.enterprise });
  const body = found?.body as { bot: { token: string } } | undefined;
  if (!body) throw new Error(`no install for ${w.team}`);
  return body.bot.token;
}

/** A root message, posted as the bot posts one, with the workspace's token. */
async function postRoot(vault: Vault, w: Where): Promise<string> {
  const client = new WebClient(await tokenOf(vault, w), {
    slackApiUrl: h.slack.url,
    retryConfig: { retries: 0 },
    logLevel: LogLevel.ERROR,
  });
  const res = await client.chat.postMessage({ channel: w.channel, text: ':hourglass: Starting' });
  return res.ts ?? '';
}

/**
 * A job of the workspace that the agent finished, recorded as a poll records it: its root
 * needs an update and the outbox holds its announcement.
 */
async function finishedJob(store: Store, w: Where, rootTs: string): Promise<string> {
  const now = Date.now();
  const t = await store.createThread(
    {
      teamId: w.team,
      enterpriseId: w.enterprise,
      channelId: w.channel,
      threadTs: rootTs,
      userId: w.user,
      prompt: 'Add a page',
    },
    now,
  );
  const snapshot = {
    jobId: `job_${w.team}_${t.id}`,
    status: 'active' as const,
    model: null,
    repository: null,
    ref: null,
    prLink: null,
  };
  const schedule = { nextPollAt: null, pollIntervalMs: 5_000 };
  await store.attachJob(t.id, snapshot, schedule, now);
  const prLink = `https://github.com/acme/docs/pull/${t.id}`;
  const key = `completed:${w.team}:${t.id}`;
  await store.recordPoll({
    threadId: t.id,
    round: 0,
    snapshot: { ...snapshot, status: 'completed', prLink },
    schedule,
    announcements: [{ key, kind: 'completed', prLink, detail: null }],
    now,
  });
  return key;
}

/** With the bot stopped, `seed` writes to its database; then it starts again. */
async function whileStopped(seed: (store: Store) => Promise<void>): Promise<void> {
  await h.stopBot();
  const store = await h.openStore();
  try {
    await seed(store);
  } finally {
    await store.close();
  }
  await h.start();
}

/** A vault over the bot's store, opened beside it, with the bot's keys. */
const vaultOver = (store: Store) => createVault(store, keyringOf(h), { retentionDays: 30 });

/** Rows of the bot's database, read beside it (SQLite's file, or PostgreSQL). */
async function rows<T>(sql: string): Promise<T[]> {
  const url = h.env.DATABASE_URL ?? '';
  if (url.startsWith('sqlite:')) {
    const db = new SqliteDatabase(url.slice('sqlite:'.length), { readonly: true });
    try {
      return db.prepare(sql).all() as T[];
    } finally {
      db.close();
    }
  }
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(sql)).rows as T[];
  } finally {
    await client.end();
  }
}

const lines = (msg: string) => h.logLines().filter((l) => l.msg === msg);
/** Calls Slack refused (its errors come with HTTP 200 and `ok: false`). */
const refused = () =>
  h.slack.calls.filter((c) => c.status !== 200 || (c.response as { ok?: boolean }).ok !== true);
/** The bot's replies in threads (the roots the tests post are top-level). */
const threadPosts = () =>
  h.slack.callsTo('chat.postMessage').filter((c) => c.args.thread_ts !== undefined);
const A: Where = { team: ALPHA.team, channel: 'C0A1', user: 'U0A1' };
const B: Where = { team: BETA.team, channel: 'C0B1', user: 'U0B1' };
const E: Where = { team: EAST.team, channel: 'C0G1', user: 'W0G1', enterprise: GLOBEX.id };

describe.each(engineKinds)('distributed mode: posting outside requests (%s)', (engine) => {
  it("announces and updates roots in each workspace with its own install's token, an org's team with the org's", async () => {
    await start(engine);
    await install(h, { team: ALPHA.team, user: 'U0A1' });
    await install(h, { team: BETA.team, user: 'U0B1' });
    await install(h, { enterprise: GLOBEX.id, orgWide: true, user: 'W0ADMIN' });
    const keys = new Map<string, string>();
    const roots = new Map<string, string>();
    await whileStopped(async (store) => {
      for (const w of [A, B, E]) {
        const root = await postRoot(vaultOver(store), w);
        roots.set(w.channel, root);
        keys.set(w.channel, await finishedJob(store, w, root));
      }
    });
    // The Home of each job's requester follows its root: published in its workspace too.
    await eventually(
      () =>
        threadPosts().length === 3 &&
        h.slack.callsTo('chat.update').length === 3 &&
        h.slack.callsTo('views.publish').length === 3,
      'three announcements, three root updates, three Homes',
      10_000,
    );
    const who = (calls: typeof h.slack.calls) =>
      calls.map((c) => [c.args.channel, c.team, c.args.team_id, c.status]).sort();
    // Each with its own workspace's token: another's would have met channel_not_found.
    const expected = [
      ['C0A1', 'T0A', 'T0A', 200],
      ['C0B1', 'T0B', 'T0B', 200],
      ['C0G1', GLOBEX.id, 'T0G1', 200],
    ];
    expect(who(threadPosts())).toEqual(expected);
    expect(who(h.slack.callsTo('chat.update'))).toEqual(expected);
    const homes = h.slack.callsTo('views.publish').map((c) => [c.args.user_id, c.team]);
    expect(homes.sort()).toEqual([
      ['U0A1', 'T0A'],
      ['U0B1', 'T0B'],
      ['W0G1', GLOBEX.id],
    ]);
    for (const w of [A, B, E]) {
      const replies = h.slack.thread(w.channel, roots.get(w.channel) ?? '');
      const announced = replies.map((m) => m.metadata?.event_payload.key);
      expect(announced).toContain(keys.get(w.channel));
    }
    expect(refused()).toEqual([]);
    expect(lines('announce.sent')).toHaveLength(3);
  });

  it('refreshes an expired rotating token before a background post, and keeps the new one sealed', async () => {
    await start(engine, true);
    await install(h, { team: ALPHA.team, user: 'U0A1' });
    type Body = { bot: { token: string; refreshToken: string; expiresAt: number } };
    let before: Body | undefined;
    await whileStopped(async (store) => {
      const vault = vaultOver(store);
      const root = await postRoot(vault, A);
      await finishedJob(store, A, root);
      // 12 hours on, at Slack and in the bot's record of the token.
      before = (await vault.findInstallation({ teamId: A.team }))?.body as Body;
      h.slack.expireToken(before.bot.token);
      const expiresAt = Math.floor(Date.now() / 1000);
      await vault.saveInstallation({
        teamId: A.team,
        enterpriseId: null,
        isEnterpriseInstall: false,
        installerUserId: 'U0A1',
        botUserId: ALPHA.botUser,
        body: { ...before, bot: { ...before.bot, expiresAt } },
      });
    });
    const post = await eventually(() => threadPosts()[0], 'the announcement', 10_000);
    expect([post.status, post.team, (post.response as { ok?: boolean }).ok]).toEqual([
      200,
      'T0A',
      true,
    ]);
    const refresh = h.slack.callsTo('oauth.v2.access').at(-1);
    expect(refresh?.args.grant_type).toBe('refresh_token');
    expect(refresh?.seq).toBeLessThan(post.seq);
    // The expired token was never used: nothing was refused.
    expect(refused()).toEqual([]);
    const after = (await vaultOver(h.botStore!).findInstallation({ teamId: A.team }))?.body as Body;
    expect(after.bot.token).not.toBe(before?.bot.token);
    for (const secret of [before?.bot.token, after.bot.token, after.bot.refreshToken])
      expect(h.logs).not.toContain(secret);
  });

  it("settles an uninstalled workspace's pending announcements and root updates, in one line for it", async () => {
    await start(engine);
    await install(h, { team: ALPHA.team, user: 'U0A1' });
    await install(h, { team: BETA.team, user: 'U0B1' });
    // Roots posted while Beta still had the app; then Beta uninstalls it.
    const vault = vaultOver(h.botStore!);
    const rootA = await postRoot(vault, A);
    const rootsB = [await postRoot(vault, B), await postRoot(vault, B), await postRoot(vault, B)];
    expect(await deliver(h, h.slack.uninstall({ team: BETA.team }))).toEqual([200, 200]);
    await eventually(() => lines('workspace.uninstalled').length === 2, 'the uninstall handled');
    // Their completions were recorded before the uninstall reached the bot.
    let keyA = '';
    let from = 0;
    await whileStopped(async (store) => {
      keyA = await finishedJob(store, A, rootA);
      for (const root of rootsB) await finishedJob(store, B, root);
      from = h.slack.calls.length;
    });
    await eventually(() => lines('slack.workspace_work_dropped')[0], 'the drop', 10_000);
    await eventually(
      () => h.slack.thread('C0A1', rootA).some((m) => m.metadata?.event_payload.key === keyA),
      "Alpha's announcement",
    );
    await sleep(300); // what else the notifier would do, it would have done by now
    expect(lines('slack.workspace_work_dropped')).toMatchObject([
      { teamId: 'T0B', announcements: 3, roots: 3, reason: NOT_INSTALLED },
    ]);
    for (const msg of ['announce.dropped', 'root.update_failed', 'announce.deferred'])
      expect([msg, lines(msg)]).toEqual([msg, []]);
    expect(h.slack.calls.slice(from).filter((c) => c.args.channel === 'C0B1')).toEqual([]);
    const outbox = await rows<{ team_id: string; sent_at: unknown; last_error: string | null }>(
      'select t.team_id, o.sent_at, o.last_error from outbox o join job_threads t on t.id = o.thread_id order by o.id',
    );
    expect(outbox.map((r) => [r.team_id, r.sent_at !== null, r.last_error])).toEqual([
      ['T0A', true, null],
      ['T0B', true, NOT_INSTALLED],
      ['T0B', true, NOT_INSTALLED],
      ['T0B', true, NOT_INSTALLED],
    ]);
    const threads = await rows<{ behind: number | string; locked: number | string }>(
      'select count(*) filter (where root_shown_version < root_version) as behind, count(root_locked_by) as locked from job_threads',
    );
    expect(threads.map((r) => [Number(r.behind), Number(r.locked)])).toEqual([[0, 0]]);
  });

  it("reads a thread reply with its workspace's own bot user: a mention of it is taken out, `@bot status` is no follow-up", async () => {
    await start(engine);
    await install(h, { team: ALPHA.team, user: 'U0A1' });
    const store = h.botStore!;
    // Replies are recorded only for a workspace whose docs are connected (the docs gate).
    await vaultOver(store).connectDocs(
      { teamId: A.team },
      { projectId: 'proj_alpha', apiKey: 'mint_alpha_test_key', connectedBy: 'U0A1' },
    );
    const root = await postRoot(vaultOver(store), A);
    await store.createThread(
      {
        teamId: A.team,
        channelId: A.channel,
        threadTs: root,
        userId: 'U0A1',
        prompt: 'Add a page',
      },
      Date.now(),
    );
    const reply = (text: string) => {
      const ts = uniqueTs();
      const event = { type: 'message', user: 'U0A1', text, ts, thread_ts: root, channel: 'C0A1' };
      return { ts, sent: eventFrom(h, { team: A.team, user: 'U0A1' }, { ...event, event_ts: ts }) };
    };
    const followUp = reply(`<@${ALPHA.botUser}> also cover Windows`);
    expect((await followUp.sent).status).toBe(200);
    await sleep(5);
    const status = reply(`<@${ALPHA.botUser}> status`);
    expect((await status.sent).status).toBe(200);
    // Recorded before the ack (its text as the agent gets it), or not at all.
    expect(await store.findFollowUp(`C0A1:${followUp.ts}`)).toMatchObject({
      text: 'also cover Windows',
    });
    expect(await store.findFollowUp(`C0A1:${status.ts}`)).toBeUndefined();
  });
});
