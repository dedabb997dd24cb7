/**
 * Distributed mode, `/agent doctor` for the workspace that asks: connected or not, its
 * project, a live check of its own key (one read of its project, within 3 s) and its budgets,
 * to its own Docs Agent admins; never the key, never another workspace's project, key or
 * budget. A workspace with nothing connected is told how to connect, and nothing reaches the
 * API. The real bot over HTTP against the fake Slack and the API emulator, on both engines.
 */
import { describe, expect, it } from 'vitest';
import { createBudgets } from '../../src/app/budgets.ts';
import { loadConfig } from '../../src/config/config.ts';
import {
  A,
  ALPHA_KEY,
  B,
  BETA_KEY,
  bothInstalled,
  closeAfterEach,
  commandFrom,
  connectBoth,
  type From,
  keyOf,
} from '../helpers/distributed.ts';
import type { Harness } from '../helpers/harness.ts';
import { engineKinds } from '../helpers/store-engines.ts';

let h: Harness;
closeAfterEach(() => h);

const A_MEMBER = { ...A, user: 'U0A2' };

async function start(
  engine: 'sqlite' | 'postgres',
  env: Record<string, string> = {},
  apiTimeoutMs?: number,
) {
  h = await bothInstalled(engine, {
    env,
    start: apiTimeoutMs ? { apiTimeoutMs } : {},
    connect: false,
  });
}

/** `/agent doctor` from a person; answers what they were told and how long it took. */
async function doctor(from: From) {
  const started = Date.now();
  const ack = await commandFrom(h, from, 'doctor');
  expect(ack.status).toBe(200);
  const answer = await h.slack.waitForResponse((r) => r.id === ack.responseId, 15_000);
  return { text: String((answer.body as { text?: string }).text), ms: Date.now() - started };
}

describe.each(engineKinds)('distributed mode: /agent doctor for a workspace (%s)', (engine) => {
  it("tells a workspace's admin it is not connected and how to connect, calling no API", async () => {
    await start(engine);
    const { text } = await doctor(A);
    expect(text).toContain('*Doctor* (this workspace)');
    expect(text).toContain(
      "✗ Docs connection: no docs project is connected to this workspace, so every command answers with how to connect. Fix: a workspace admin connects one from Docs Agent's App Home (Connect)",
    );
    expect(text).toMatch(/^✓ Docs Agent itself: all 4 of its checks passed$/m);
    expect(text).not.toContain('Docs API key');
    // A member who is no admin of it: one line, and who to ask.
    const member = await doctor(A_MEMBER);
    expect(member.text).toBe(
      '✗ 1 check failed — ask a Docs Agent admin of this workspace (whoever installed it, or someone on its admin list) to run `/agent doctor` for the details.',
    );
    expect(h.api.requests).toHaveLength(0);
  });

  it('checks the asking workspace\u2019s own key live and shows its budgets, nothing of another', async () => {
    await start(engine);
    await connectBoth(h);
    const config = loadConfig(h.env);
    if (!config.ok || !h.botStore) throw new Error('no bot');
    const budgets = createBudgets(config.config, h.botStore);
    // Beta's project spent more of its hour than Alpha's, in both budgets.
    for (let i = 0; i < 3; i++) await budgets.agentFor('proj_alpha').take('job.create');
    for (let i = 0; i < 40; i++) await budgets.agentFor('proj_beta').take('job.create');
    for (let i = 0; i < 7; i++) await budgets.analyticsFor('proj_beta').take('visitors.get');
    const { text } = await doctor(A);
    expect(text.split('\n')).toEqual([
      '*Doctor* (this workspace)',
      expect.stringMatching(/^✓ Docs connection: project proj_alpha, connected \d{4}-\d\d-\d\d$/),
      expect.stringMatching(
        /^✓ Docs API key: accepted for project proj_alpha \(one read of the project just now, \d+ ms; no budget spent\)$/,
      ),
      '✓ Agent budget: 97 of 100 uses (jobs and follow-ups) left this hour for project proj_alpha',
      '✓ Analytics budget: 100 of 100 requests (reports, insights) left this hour for your organisation',
      expect.stringMatching(/^✓ Docs Agent itself: all \d of its checks passed$/),
      'All checks passed.',
    ]);
    // One read, of Alpha's project, with Alpha's key; nothing of Beta's said or used.
    expect(h.api.requests.map((r) => [r.kind, r.path, keyOf(r)])).toEqual([
      ['jobs', '/v1/agent/proj_alpha/jobs', ALPHA_KEY],
    ]);
    for (const other of ['proj_beta', BETA_KEY, ALPHA_KEY, '60', '93'])
      expect(text).not.toContain(other);
    // Beta's key is refused now: Beta's admin is told to replace it; Alpha's answer is unmoved.
    h.api.inject('jobs', { status: 401 });
    const beta = await doctor(B);
    expect(beta.text).toContain(
      "✗ Docs API key: the key was rejected (401): wrong, revoked or expired. Fix: a workspace admin replaces the key from Docs Agent's App Home (Replace key)",
    );
    expect(beta.text).toContain('60 of 100 uses');
    expect(beta.text).toContain('93 of 100 requests');
    expect(beta.text).not.toMatch(/proj_alpha|U0A1/);
    expect(h.api.requests.map((r) => keyOf(r))).toEqual([ALPHA_KEY, BETA_KEY]);
    for (const secret of [ALPHA_KEY, BETA_KEY]) expect(h.logs).not.toContain(secret);
  });

  it('bounds the key check: an API that does not answer is said within 3 s', async () => {
    // The client's own timeout is longer than the doctor's: the doctor's bound is what acts.
    await start(engine, {}, 30_000);
    await connectBoth(h);
    h.api.inject('jobs', { slowMs: 20_000 });
    const { text, ms } = await doctor(A);
    expect(text).toContain(
      '✗ Docs API key: not checked: the Mintlify API did not answer within 3000 ms. Fix: try again in a minute',
    );
    expect(ms).toBeGreaterThanOrEqual(3_000);
    expect(ms).toBeLessThan(8_000);
  });

  it("gives the deployment's admins its checks and the workspace's, under it", async () => {
    await start(engine, { ADMIN_USERS: 'U0A2' });
    await connectBoth(h);
    const { text } = await doctor(A_MEMBER);
    const lines = text.split('\n');
    expect(lines[1]).toBe(
      'Mode: distributed (OAuth install at /slack/install, 2 workspaces installed, token rotation off)',
    );
    expect(lines.indexOf('*This workspace*')).toBeGreaterThan(1);
    expect(lines.slice(lines.indexOf('*This workspace*') + 1, -1)).toEqual([
      expect.stringMatching(/^✓ Docs connection: project proj_alpha, /),
      expect.stringMatching(/^✓ Docs API key: accepted for project proj_alpha /),
      expect.stringMatching(/^✓ Agent budget: 100 of 100 /),
      expect.stringMatching(/^✓ Analytics budget: 100 of 100 /),
    ]);
    expect(text).not.toMatch(/proj_beta|mint_/);
  });
});
