/**
 * Distributed mode, the bot's own state per workspace (issue 21, item 4): an insight gap of
 * one workspace cannot be read, drafted or dismissed from another, whatever a click's value
 * or a form's metadata names: forged cross-workspace payloads are refused with a plain answer
 * and a log line of ids, and change nothing. The chart points one workspace's report kept of
 * a project are not another's on the same project; each workspace's Home shows its own latest
 * traffic report. The real bot over HTTP against the fake Slack,
 * on both engines.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { Store } from '../../src/store/types.ts';
import { SLACK_APP } from '../fakes/slack.ts';
import { openHome, textOf } from '../helpers/connect.ts';
import {
  A,
  ALPHA,
  B,
  BETA,
  commandFrom,
  connectDocs,
  startDistributed,
} from '../helpers/distributed.ts';
import { type Harness, SECRETS } from '../helpers/harness.ts';
import { eventually } from '../helpers/net.ts';
import { viewSubmission } from '../helpers/slack-requests.ts';
import { engineKinds } from '../helpers/store-engines.ts';

let h: Harness;
let store: Store | undefined;
afterEach(async (ctx) => {
  if (ctx.task.result?.state === 'fail') console.error(h.logs.split('\n').slice(-40).join('\n'));
  await store?.close();
  store = undefined;
  await h.close();
});

const IN_ALPHA = A;
const IN_BETA = B;
type From = typeof IN_ALPHA;

/** Both workspaces installed and connected; a gap of Alpha's in the store. */
async function start(engine: 'sqlite' | 'postgres'): Promise<number> {
  h = await startDistributed(engine, { installs: [IN_ALPHA, IN_BETA] });
  // Both workspaces connect one docs project (two teams of a company, say): only the
  // workspace keeps one's gaps from the other's (a gap is acted on from its project's channels).
  for (const from of [IN_ALPHA, IN_BETA]) await connectDocs(h, from, 'proj_shared', SECRETS.apiKey);
  store = await h.openStore();
  const [gap] = await store.addGaps(
    { teamId: ALPHA.team },
    [
      {
        projectId: 'proj_shared',
        key: 'api key rotat',
        kind: 'question',
        signatures: ['api key rotat'],
        title: 'How do I rotate API keys?',
        evidence: '{"secret":"alpha-only evidence"}',
        evidenceTo: '2026-11-08',
      },
    ],
    Date.now(),
  );
  return gap!.id;
}

/** Someone of `from` picks `value` in a gap's menu (⋯), as Slack sends it; answers the reply. */
async function choose(from: From, value: string) {
  const id = `choose-${Math.random().toString(36).slice(2)}`;
  const ack = await h.interact({
    type: 'block_actions',
    user: { id: from.user, team_id: from.team },
    team: { id: from.team },
    enterprise: null,
    is_enterprise_install: false,
    api_app_id: SLACK_APP.appId,
    channel: { id: from.channel },
    container: { type: 'message', channel_id: from.channel, message_ts: '1.1' },
    trigger_id: h.slack.issueTriggerId(from.user),
    response_url: h.slack.responseUrl(id),
    actions: [
      {
        type: 'overflow',
        action_id: 'insight_gap',
        block_id: 'gap',
        selected_option: { value },
        action_ts: `${(Date.now() / 1000).toFixed(6)}`,
      },
    ],
  });
  expect(ack.status).toBe(200);
  const answer = await h.slack.waitForResponse((r) => r.id === id);
  return String((answer.body as { text?: string }).text);
}

/** The Draft it form submitted by someone of `from`, with the metadata given. */
function submitDraft(from: From, meta: Record<string, unknown>) {
  const view = {
    id: `V${Math.random().toString(36).slice(2, 10).toUpperCase()}`,
    team_id: from.team,
    type: 'modal',
    callback_id: 'insight_draft_form',
    private_metadata: JSON.stringify(meta),
  };
  const payload = viewSubmission(view, from.user, { draft: { prompt: 'Add a page' } });
  return h.interact({
    ...payload,
    team: { id: from.team, domain: 'x' },
    user: { id: from.user, team_id: from.team },
  });
}

const refused = (reason: string) =>
  h.logLines().filter((l) => l.msg === 'workspace.refused' && l.reason === reason);
const gapOf = async (id: number) => (await store!.gapWithThread({ teamId: ALPHA.team }, id))?.gap;

describe.each(engineKinds)('distributed mode: state per workspace (%s)', (engine) => {
  it("refuses a gap menu choice from another workspace naming one of Alpha's gaps", async () => {
    const id = await start(engine);
    for (const what of ['dismiss', 'evidence', 'draft']) {
      const text = await choose(IN_BETA, `${what}:${id}`);
      expect(text).toContain('This gap is not kept in this workspace');
      expect(text).not.toContain('alpha-only');
    }
    expect(refused('unknown_gap').map((l) => [l.teamId, l.gapId])).toEqual([
      [BETA.team, id],
      [BETA.team, id],
      [BETA.team, id],
    ]);
    expect(h.slack.callsTo('views.open')).toHaveLength(0);
    expect(await gapOf(id)).toMatchObject({ state: 'open', dismissedBy: null });
    // Alpha's own people reach it.
    expect(await choose(IN_ALPHA, `dismiss:${id}`)).toContain('Dismissed');
    expect(await gapOf(id)).toMatchObject({ state: 'dismissed', dismissedBy: 'U0A1' });
  });

  it('refuses a Draft it form naming another workspace, or a gap of another, and claims nothing', async () => {
    const id = await start(engine);
    const alphaMeta = { teamId: ALPHA.team, channelId: 'C0A1', kind: 'question', gapId: id };
    const forged = await submitDraft(IN_BETA, alphaMeta);
    expect(forged.body).toMatchObject({ response_action: 'update' });
    expect(JSON.stringify(forged.body)).toContain('This form belongs to another workspace');
    expect(refused('other_workspace')[0]).toMatchObject({
      teamId: BETA.team,
      claimedTeamId: ALPHA.team,
      gapId: id,
    });
    // Beta's own form carrying Alpha's gap id: no such gap in Beta.
    const betaMeta = { teamId: BETA.team, channelId: 'C0B1', kind: 'question', gapId: id };
    const other = await submitDraft(IN_BETA, betaMeta);
    expect(JSON.stringify(other.body)).toContain('it belongs to another project or workspace');
    expect(refused('unknown_gap')[0]).toMatchObject({
      teamId: BETA.team,
      gapId: id,
    });
    expect(await gapOf(id)).toMatchObject({ state: 'open', claimedBy: null });
    expect(h.api.requestsTo('create')).toHaveLength(0);
  });

  it("keeps each workspace's chart points: another's report on the same project reads its own", async () => {
    await start(engine);
    h.api.addProject('proj_shared');
    /** A day's totals asked for the chart (`limit=1`), with the key of that workspace. */
    const pointAsks = () => h.api.requestsTo('visitors').filter((r) => r.query.limit === '1');
    const posted = () => h.logLines().filter((l) => l.msg === 'visitors.posted').length;
    const report = async (from: From, n: number) => {
      expect((await commandFrom(h, from, '7d', '/visitors')).status).toBe(200);
      await eventually(() => posted() === n || undefined, `report ${n}`);
    };
    await report(IN_ALPHA, 1);
    const alpha = pointAsks().length;
    // Alpha's settled days are kept (today's is not).
    const kept = async (team: string) =>
      (await store!.workspaceRows({ teamId: team })).visitor_points;
    const alphaKept = await kept(ALPHA.team);
    expect(alphaKept).toBeGreaterThan(0);
    await report(IN_BETA, 2);
    // Beta asks for every day again, with its own key: Alpha's kept points are not Beta's.
    expect(pointAsks().length - alpha).toBe(alpha);
    expect(await kept(BETA.team)).toBe(alphaKept);
    expect(await kept(ALPHA.team)).toBe(alphaKept);
  });

  it("shows each workspace's own latest traffic report on its Home, none of another's", async () => {
    await start(engine);
    h.api.addProject('proj_shared');
    const posted = () => h.logLines().filter((l) => l.msg === 'visitors.posted').length;
    expect((await commandFrom(h, IN_ALPHA, '2026-11-01 2026-11-07', '/visitors')).status).toBe(200);
    await eventually(() => posted() === 1 || undefined, "Alpha's report");
    const alpha = textOf(await openHome(h, IN_ALPHA));
    expect(alpha).toContain('Last report:* Nov 1 – Nov 7, 2026');
    expect(alpha).toContain('unique visitors');
    // Beta, on the same project, has run no report: Alpha's is not its.
    expect(textOf(await openHome(h, IN_BETA))).toContain('No traffic report yet');
    expect((await commandFrom(h, IN_BETA, '2026-11-08 2026-11-14', '/visitors')).status).toBe(200);
    await eventually(() => posted() === 2 || undefined, "Beta's report");
    expect(textOf(await openHome(h, IN_BETA))).toContain('Last report:* Nov 8 – Nov 14, 2026');
    expect(textOf(await openHome(h, IN_ALPHA))).toContain('Last report:* Nov 1 – Nov 7, 2026');
  });
});
