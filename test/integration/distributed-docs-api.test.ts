/**
 * Distributed mode, the docs API for each workspace: two workspaces connected to different
 * projects, each with a key good for its own project only (the API emulator refuses any
 * other). `/agent`, its polls, a thread's follow-up and `/visitors` of each go to its own
 * project with its own key; a workspace disconnected from its Home makes no call at all
 * (its job's polls stop at once, and start again when it connects); one workspace's spent
 * analytics budget leaves the other's reports alone; each workspace's allowlists and docs
 * site apply to it alone. The real bot over HTTP against the fake Slack and the emulator, on
 * both engines.
 */
import { describe, expect, it } from 'vitest';
import { refusalText } from '../../src/access.ts';
import { createBudgets } from '../../src/app/budgets.ts';
import { loadConfig } from '../../src/config/config.ts';
import { NOT_CONNECTED_TEXT } from '../../src/slack/connect-blocks.ts';
import type { RecordedRequest } from '../fakes/api-emulator.ts';
import { homeClick } from '../helpers/connect.ts';
import {
  A,
  ALPHA,
  ALPHA_KEY,
  B,
  BETA,
  BETA_KEY,
  bothInstalled,
  closeAfterEach,
  commandFrom,
  EAST,
  type From,
  GLOBEX,
  install,
  keyOf,
  replyFrom,
  vaultOf,
} from '../helpers/distributed.ts';
import { type Harness, SECRETS } from '../helpers/harness.ts';
import { eventually, sleep } from '../helpers/net.ts';
import { engineKinds } from '../helpers/store-engines.ts';

let h: Harness;
closeAfterEach(() => h);

/** Each project's own key (ALPHA_KEY, BETA_KEY too): the emulator answers 403 to it for any other. */
const E_KEY = 'mint_eastKEY_5e4d3c2b1a0f9e8d7c6b5';
const KEY_OF: Record<string, string> = {
  proj_alpha: ALPHA_KEY,
  proj_beta: BETA_KEY,
  proj_east: E_KEY,
};
/** A team of an Enterprise Grid org, served by the org's org-wide install. */
const E = { team: EAST.team, user: 'W0G1', channel: 'C0G1', enterprise: GLOBEX.id, orgWide: true };

async function start(engine: 'sqlite' | 'postgres', env: Record<string, string> = {}) {
  const workspaces = [ALPHA, BETA, EAST];
  h = await bothInstalled(engine, { env, workspaces, projects: { proj_east: E_KEY } });
}

const projectOf = (r: RecordedRequest) =>
  /^\/v[12]\/(?:agent|analytics)\/([^/]+)/.exec(r.path)?.[1];
const madeWith = (key: string) => h.api.requests.filter((r) => keyOf(r) === key);

/** `/agent` from a workspace: waits for its job, its root message, and its first poll. */
async function startJob(from: From & { channel: string }, prompt: string) {
  const n = h.api.createdJobs().length;
  const ack = await commandFrom(h, from, prompt);
  expect(ack.status).toBe(200);
  const job = await eventually(() => h.api.createdJobs()[n], `the job of ${from.team}`);
  const root = await eventually(
    () => h.slack.history(from.channel).find((m) => !m.thread_ts && m.text?.includes(prompt)),
    `the root of ${from.team}`,
  );
  await eventually(
    () => h.api.requestsTo('get').some((r) => r.path.endsWith(`/job/${job.id}`)),
    `a poll of ${job.id}`,
  );
  return { job, rootTs: root.ts };
}

/** `/visitors` from a workspace; answers once it is posted or the person was told why not. */
async function visitors(from: From) {
  const ack = await commandFrom(h, from, '7d', '/visitors');
  expect(ack.status).toBe(200);
  return ack;
}

describe.each(engineKinds)('distributed mode: the docs API per workspace (%s)', (engine) => {
  it("sends each workspace's jobs, polls, follow-ups and reports to its project with its key", async () => {
    await start(engine);
    const a = await startJob(A, 'Add a page for Alpha');
    const b = await startJob(B, 'Add a page for Beta');
    expect([h.api.projectOf(a.job.id), h.api.projectOf(b.job.id)]).toEqual([
      'proj_alpha',
      'proj_beta',
    ]);
    // A follow-up in Alpha's job thread goes to Alpha's job with Alpha's key.
    expect((await replyFrom(h, A, a.rootTs, 'Add a table too')).status).toBe(200);
    const [message] = await eventually(
      () => (h.api.requestsTo('message').length === 1 ? h.api.requestsTo('message') : undefined),
      'the follow-up',
    );
    expect(message?.path).toBe(`/v2/agent/proj_alpha/job/${a.job.id}/message`);
    expect(h.api.jobs.get(a.job.id)?.messages).toEqual(['Add a page for Alpha', 'Add a table too']);
    // A team of an org, through the org-wide install: its own connection, by org and team.
    await install(h, { enterprise: GLOBEX.id, orgWide: true, user: 'W0ADMIN' });
    await vaultOf(h).connectDocs(
      { enterpriseId: GLOBEX.id, teamId: EAST.team },
      { projectId: 'proj_east', apiKey: E_KEY, connectedBy: 'W0ADMIN' },
    );
    const e = await startJob(E, 'Add a page for East');
    expect(h.api.projectOf(e.job.id)).toBe('proj_east');
    await visitors(A);
    await visitors(B);
    await visitors(E);
    await eventually(
      () => h.logLines().filter((l) => l.msg === 'visitors.posted').length === 3,
      'the three reports',
    );
    // Every channel uses the workspace's connected project: `/agent project` says so, and
    // changes nothing (no other project is checked with the workspace's key).
    const answer = async (text: string) => {
      const ack = await commandFrom(h, A, text);
      const r = await h.slack.waitForResponse((x) => x.id === ack.responseId, 10_000);
      return String((r.body as { text?: string }).text);
    };
    expect(await answer('project')).toContain('This workspace uses project `proj_alpha`');
    expect(await answer('project proj_beta')).toContain(
      "Every channel of this workspace uses the docs project connected in Docs Agent's App Home",
    );
    // The help says the same: the project is the App Home's, not `/agent project <id>`'s.
    const help = String((await commandFrom(h, A, 'help')).body?.text);
    expect(help).toContain("a Docs Agent admin connects or replaces it from Docs Agent's App Home");
    expect(help).not.toContain('/agent project &lt;projectId&gt;');
    const byProject = new Map<string, Set<string>>();
    for (const r of h.api.requests) {
      const p = String(projectOf(r));
      byProject.set(p, new Set([...(byProject.get(p) ?? []), `${r.kind}`]));
    }
    expect([...byProject.keys()].sort()).toEqual(['proj_alpha', 'proj_beta', 'proj_east']);
    expect([...(byProject.get('proj_alpha') ?? [])].sort()).toEqual([
      'create',
      'get',
      'message',
      'visitors',
    ]);
    expect([...(byProject.get('proj_beta') ?? [])].sort()).toEqual(['create', 'get', 'visitors']);
    expect([...(byProject.get('proj_east') ?? [])].sort()).toEqual(['create', 'get', 'visitors']);
    // Every call went with its own project's key, and none was refused.
    for (const r of h.api.requests) {
      expect([r.path, keyOf(r)]).toEqual([r.path, KEY_OF[String(projectOf(r))]]);
      expect([r.path, r.status]).toEqual([r.path, r.kind === 'create' ? 201 : 200]);
    }
    expect(h.logs).not.toContain(ALPHA_KEY);
    expect(h.logs).not.toContain(BETA_KEY);
  });

  it('makes no call for a workspace disconnected from its Home, and calls again once it connects', async () => {
    await start(engine);
    const a = await startJob(A, 'Add a page for Alpha');
    await startJob(B, 'Add a page for Beta');
    // The admin disconnects: the bot's own vault drops the key it kept for the client.
    expect((await homeClick(h, A, 'docs_disconnect')).status).toBe(200);
    await eventually(
      async () => (await vaultOf(h).getDocsConnection({ teamId: A.team })).connection === null,
      'disconnected',
    );
    await sleep(300); // a poll already on the wire may still land
    const alphaCalls = madeWith(ALPHA_KEY).length;
    const betaCalls = madeWith(BETA_KEY).length;
    // Polls run every 400 ms at most: Beta's go on, Alpha's job is not asked about.
    await sleep(1_500);
    expect(madeWith(ALPHA_KEY)).toHaveLength(alphaCalls);
    expect(madeWith(BETA_KEY).length).toBeGreaterThan(betaCalls);
    expect(h.api.requests.filter((r) => keyOf(r) !== ALPHA_KEY && keyOf(r) !== BETA_KEY)).toEqual(
      [],
    );
    const notConnected = h
      .logLines()
      .filter((l) => l.msg === 'poll.failed' && l.kind === 'not_connected');
    expect(notConnected.length).toBeGreaterThan(0);
    // Its commands are answered with how to connect, calling nothing.
    const ack = await commandFrom(h, A, 'Another page');
    expect(ack.body).toEqual({ response_type: 'ephemeral', text: NOT_CONNECTED_TEXT });
    expect(madeWith(ALPHA_KEY)).toHaveLength(alphaCalls);
    // Connected again (with the organisation's admin key): its job is polled with that key.
    await vaultOf(h).connectDocs(
      { teamId: A.team },
      { projectId: 'proj_alpha', apiKey: SECRETS.apiKey, connectedBy: A.user },
    );
    await eventually(
      () =>
        madeWith(SECRETS.apiKey).some(
          (r) => r.path === `/v2/agent/proj_alpha/job/${a.job.id}` && r.status === 200,
        ),
      "a poll of Alpha's job with its new key",
      5_000,
    );
  });

  it("keeps one workspace's spent analytics budget from stopping another's /visitors and /insights", async () => {
    await start(engine);
    const config = loadConfig(h.env);
    if (!config.ok || !h.botStore) throw new Error('no bot');
    // Alpha's organisation spent its 100 analytics requests this hour.
    const alpha = createBudgets(config.config, h.botStore).analyticsFor('proj_alpha');
    for (let i = 0; i < 100; i++) await alpha.take('visitors.get');
    const spent = await visitors(A);
    const told = await h.slack.waitForResponse((r) => r.id === spent.responseId, 10_000);
    expect(String((told.body as { text?: string }).text)).toContain(
      'The analytics budget (100 requests per hour for your organisation) is used up',
    );
    await visitors(B);
    await eventually(
      () => h.logLines().some((l) => l.msg === 'visitors.posted' && l.channelId === B.channel),
      "Beta's report",
    );
    // /insights plans its reads within the workspace's organisation's budget, not another's.
    const planned = await commandFrom(h, A, '7d', '/insights');
    const tooLow = await h.slack.waitForResponse((r) => r.id === planned.responseId, 10_000);
    expect(String((tooLow.body as { text?: string }).text)).toContain('is used up');
    expect(h.logLines().some((l) => l.msg === 'insights.budget_too_low')).toBe(true);
    await commandFrom(h, B, '7d', '/insights');
    await eventually(
      () => h.logLines().some((l) => l.msg === 'insights.posted' && l.channelId === B.channel),
      "Beta's insights",
    );
    expect(madeWith(ALPHA_KEY)).toEqual([]);
    expect(madeWith(BETA_KEY).filter((r) => r.kind === 'visitors').length).toBeGreaterThan(0);
    expect(madeWith(BETA_KEY).filter((r) => r.kind === 'searches').length).toBeGreaterThan(0);
    expect(h.api.requests.every((r) => projectOf(r) === 'proj_beta')).toBe(true);
  });

  it("applies each workspace's allowlists and docs site to it alone", async () => {
    await start(engine, { DOCS_BASE_URL: 'https://docs.deployment.example' });
    const vault = vaultOf(h);
    await vault.updateSettings(
      { teamId: A.team },
      { allowedUsers: [A.user], docsBaseUrl: 'https://docs.alpha.example' },
    );
    await vault.updateSettings({ teamId: B.team }, { allowedChannels: [B.channel] });
    // Alpha lets only U0A1 in; Beta only its channel C0B1 (and anyone there).
    const other = await commandFrom(h, { ...A, user: 'U0A2' }, '7d', '/visitors');
    expect(other.body).toEqual({
      response_type: 'ephemeral',
      text: refusalText('user', 'workspace'),
    });
    const elsewhere = await commandFrom(h, { ...B, channel: 'C0B9' }, '7d', '/visitors');
    expect(elsewhere.body).toEqual({
      response_type: 'ephemeral',
      text: refusalText('channel', 'workspace'),
    });
    await visitors(A);
    await visitors(B);
    await eventually(
      () => h.logLines().filter((l) => l.msg === 'visitors.posted').length === 2,
      'both reports',
    );
    const linksIn = (channel: string) =>
      h.slack
        .callsTo('chat.postMessage')
        .filter((c) => c.args.channel === channel)
        .map((c) => JSON.stringify(c.args.blocks ?? ''))
        .join('\n');
    expect(linksIn(A.channel)).toContain('<https://docs.alpha.example/');
    expect(linksIn(A.channel)).not.toContain('docs.deployment.example');
    expect(linksIn(B.channel)).toContain('<https://docs.deployment.example/');
    expect(linksIn(B.channel)).not.toContain('docs.alpha.example');
    // Before the ack: a reply of someone Alpha leaves out is never recorded, so never sent.
    const job = await startJob(A, 'Add a page for Alpha');
    const refused = await replyFrom(h, { ...A, user: 'U0A2' }, job.rootTs, 'Delete everything');
    expect(refused.status).toBe(200);
    const allowed = await replyFrom(h, A, job.rootTs, 'Add a table too');
    await eventually(() => h.api.requestsTo('message').length === 1, 'the allowed follow-up');
    await sleep(200);
    expect(h.api.requestsTo('message').map((r) => r.body)).toEqual([{ prompt: 'Add a table too' }]);
    // Follow-ups are kept under the reply's channel and ts (src/jobs/follow-ups.ts).
    if (!h.botStore) throw new Error('no bot');
    expect(await h.botStore.findFollowUp(`${A.channel}:${refused.ts}`)).toBeUndefined();
    expect(await h.botStore.findFollowUp(`${A.channel}:${allowed.ts}`)).toBeDefined();
  });
});
