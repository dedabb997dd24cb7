/**
 * Distributed mode's API calls: each names its workspace and goes with that workspace's
 * connected key, to its connected project; nothing is sent for a workspace with nothing
 * connected; the analytics budget is the workspace's organisation's. And the keys behind
 * them (src/workspaces/docs-keys.ts): opened from a real vault over a real store, kept at
 * most a minute, dropped when the connection changes, the workspace is uninstalled, or the
 * service refuses the key.
 */
import { randomBytes } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type Budget, slidingWindowBudget } from '../../src/api/budget.ts';
import { ApiClient, type WorkspaceKeys } from '../../src/api/client.ts';
import { BudgetExhausted, NotConnected, Unauthorized } from '../../src/api/errors.ts';
import { Keyring } from '../../src/sealed.ts';
import { openSqliteStore } from '../../src/store/sqlite.ts';
import type { Store } from '../../src/store/types.ts';
import { createDocsKeys, forgettingKeys } from '../../src/workspaces/docs-keys.ts';
import { createVault, type Vault } from '../../src/workspaces/vault.ts';
import { ApiEmulator } from '../fakes/api-emulator.ts';
import { memoryLogger } from '../helpers/log.ts';

const ORG_KEY = 'mint_org_admin_key_00000000';
const A = { teamId: 'T0A' };
const B = { teamId: 'T0B', enterpriseId: 'E0G' };
const A_KEY = 'mint_alpha_project_key_000001';
const B_KEY = 'mint_beta_project_key_0000002';

let api: ApiEmulator;
let store: Store;
let vault: Vault;
let clock: number;
let logs: ReturnType<typeof memoryLogger>;

beforeEach(async () => {
  api = await ApiEmulator.start({ apiKey: ORG_KEY, projectId: 'proj_env' });
  api.addProject('proj_a', A_KEY);
  api.addProject('proj_b', B_KEY);
  store = await openSqliteStore(':memory:');
  clock = Date.parse('2026-11-22T10:00:00Z');
  const keyring = new Keyring([{ id: 'k1', key: randomBytes(32) }]);
  vault = createVault(store, keyring, { retentionDays: 30, now: () => clock });
  await vault.connectDocs(A, { projectId: 'proj_a', apiKey: A_KEY, connectedBy: 'U0A1' });
  await vault.connectDocs(B, { projectId: 'proj_b', apiKey: B_KEY, connectedBy: 'W0B1' });
  logs = memoryLogger([A_KEY, B_KEY, ORG_KEY]);
});
afterEach(async () => {
  await api.close();
  await store.close();
});

/** A distributed client: no key of its own, each workspace's from `keys`. */
const client = (
  keys: WorkspaceKeys,
  budgets?: ConstructorParameters<typeof ApiClient>[0]['budgets'],
) =>
  new ApiClient({
    baseUrl: api.url,
    apiKey: '',
    projectId: '',
    workspaceKeys: keys,
    log: logs.log,
    retry: { retries: 0 },
    timeoutMs: 1_000,
    ...(budgets ? { budgets } : {}),
  });

const sent = () => api.requests.map((r) => [r.method, r.path, r.authorization, r.status]);
const range = { dateFrom: '2026-11-01', dateTo: '2026-11-08', limit: 1, offset: 0 };

describe('calls for a workspace', () => {
  it("go with the workspace's key to its project: create, message, get, visitors", async () => {
    const keys = createDocsKeys({ vault, log: logs.log, now: () => clock });
    const c = client(keys);
    const a = await c.createJob('Add a page', { workspace: A });
    const b = await c.createJob('Fix a typo', { workspace: B });
    await c.sendMessage(a.id, 'And a table', { workspace: A });
    await c.getJob(b.id, { workspace: B });
    await c.getVisitorsPage({ ...range, workspace: A });
    expect(sent()).toEqual([
      ['POST', '/v2/agent/proj_a/job', `Bearer ${A_KEY}`, 201],
      ['POST', '/v2/agent/proj_b/job', `Bearer ${B_KEY}`, 201],
      ['POST', `/v2/agent/proj_a/job/${a.id}/message`, `Bearer ${A_KEY}`, 200],
      ['GET', `/v2/agent/proj_b/job/${b.id}`, `Bearer ${B_KEY}`, 200],
      ['GET', '/v1/analytics/proj_a/visitors', `Bearer ${A_KEY}`, 200],
    ]);
    expect([api.projectOf(a.id), api.projectOf(b.id)]).toEqual(['proj_a', 'proj_b']);
    // A job of one project asked for under its own project, with the other workspace's key:
    // the emulator refuses the key (403), as the service does.
    await expect(c.getJob(a.id, { workspace: B, project: 'proj_a' })).rejects.toMatchObject({
      kind: 'forbidden',
    });
    expect(logs.text()).not.toMatch(/mint_/);
  });

  it('sends nothing for a workspace with nothing connected, or for none', async () => {
    const keys = createDocsKeys({ vault, log: logs.log, now: () => clock });
    const c = client(keys);
    await expect(c.createJob('x', { workspace: { teamId: 'T0NONE' } })).rejects.toThrow(
      NotConnected,
    );
    await expect(c.getJob('job_1')).rejects.toThrow(NotConnected);
    await expect(c.getVisitorsPage(range)).rejects.toThrow(NotConnected);
    await expect(c.checkAccess()).rejects.toThrow(NotConnected);
    expect(api.requests).toHaveLength(0);
  });

  it("counts analytics against the workspace's organisation: A's spent budget leaves B's", async () => {
    const spent = new Map<string, Budget>();
    const analyticsFor = (org: string) => {
      const budget =
        spent.get(org) ??
        slidingWindowBudget(store, {
          key: `analytics:${org}`,
          limit: 1,
          windowMs: 3_600_000,
          description: 'Analytics',
          now: () => clock,
        });
      spent.set(org, budget);
      return budget;
    };
    const c = client(createDocsKeys({ vault, log: logs.log, now: () => clock }), {
      analytics: analyticsFor,
    });
    await c.getVisitorsPage({ ...range, workspace: A });
    await expect(c.getVisitorsPage({ ...range, workspace: A })).rejects.toThrow(BudgetExhausted);
    await c.getVisitorsPage({ ...range, workspace: B });
    expect(sent().map((r) => r[2])).toEqual([`Bearer ${A_KEY}`, `Bearer ${B_KEY}`]);
    expect(await analyticsFor('proj_a').remaining()).toBe(0);
    expect(await analyticsFor('proj_b').remaining()).toBe(0);
  });
});

describe('the keys kept for the client', () => {
  it('opens a key once a minute at most, and sees a connection the moment it is made', async () => {
    let opened = 0;
    const counting: Pick<Vault, 'getDocsConnection'> = {
      getDocsConnection: async (ws) => {
        opened++;
        return vault.getDocsConnection(ws);
      },
    };
    const keys = createDocsKeys({ vault: counting, log: logs.log, now: () => clock });
    const [x, y] = await Promise.all([keys.credentialsFor(A), keys.credentialsFor(A)]);
    expect(x).toEqual({ projectId: 'proj_a', apiKey: A_KEY });
    expect(y).toBe(x);
    clock += 59_000;
    await keys.credentialsFor(A);
    expect(opened).toBe(1);
    clock += 1_000;
    await keys.credentialsFor(A);
    expect(opened).toBe(2);
    // Nothing connected is not remembered.
    const C = { teamId: 'T0C' };
    expect(await keys.credentialsFor(C)).toBeUndefined();
    await vault.connectDocs(C, { projectId: 'proj_a', apiKey: A_KEY, connectedBy: 'U0C1' });
    expect(await keys.credentialsFor(C)).toEqual({ projectId: 'proj_a', apiKey: A_KEY });
    // A longer time to live than a minute is not taken.
    const slow = createDocsKeys({
      vault: counting,
      log: logs.log,
      now: () => clock,
      ttlMs: 3_600_000,
    });
    await slow.credentialsFor(A);
    clock += 60_000;
    const before = opened;
    await slow.credentialsFor(A);
    expect(opened).toBe(before + 1);
  });

  it('drops a key when it is replaced, disconnected or uninstalled, and when the service refuses it', async () => {
    const keys = createDocsKeys({ vault, log: logs.log, now: () => clock });
    const wrapped = forgettingKeys(vault, keys);
    expect((await keys.credentialsFor(A))?.apiKey).toBe(A_KEY);
    await wrapped.connectDocs(A, { projectId: 'proj_b', apiKey: B_KEY, connectedBy: 'U0A1' });
    expect(await keys.credentialsFor(A)).toEqual({ projectId: 'proj_b', apiKey: B_KEY });
    await wrapped.disconnectDocs(A);
    expect(await keys.credentialsFor(A)).toBeUndefined();
    // An org's uninstall drops every team of the org.
    expect((await keys.credentialsFor(B))?.apiKey).toBe(B_KEY);
    await wrapped.markUninstalled({ enterpriseId: 'E0G' });
    await vault.connectDocs(B, {
      projectId: 'proj_b',
      apiKey: 'mint_after_key_0000000003',
      connectedBy: 'W0B1',
    });
    expect((await keys.credentialsFor(B))?.apiKey).toBe('mint_after_key_0000000003');
    // A key the service refuses is read again at the next call, and the error says whose.
    const c = client(keys);
    await vault.connectDocs(A, {
      projectId: 'proj_a',
      apiKey: 'mint_wrong_key_0000000009',
      connectedBy: 'U0A1',
    });
    const err = await c.createJob('x', { workspace: A }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Unauthorized);
    expect((err as Error).message).toContain(
      "a workspace admin replaces it from Docs Agent's App Home",
    );
    await vault.connectDocs(A, { projectId: 'proj_a', apiKey: A_KEY, connectedBy: 'U0A1' });
    await c.createJob('y', { workspace: A });
    expect(sent().map((r) => r[3])).toEqual([401, 201]);
    expect(logs.text()).not.toMatch(/mint_/);
  });

  it('keeps nothing a read begun before a forget opened', async () => {
    let release = () => {};
    const gate = new Promise<void>((r) => {
      release = r;
    });
    const slow: Pick<Vault, 'getDocsConnection'> = {
      getDocsConnection: async (ws) => {
        const found = await vault.getDocsConnection(ws);
        await gate;
        return found;
      },
    };
    const keys = createDocsKeys({ vault: slow, log: logs.log, now: () => clock });
    const reading = keys.credentialsFor(A);
    await vault.disconnectDocs(A);
    keys.forget(A);
    release();
    expect((await reading)?.apiKey).toBe(A_KEY);
    expect(await keys.credentialsFor(A)).toBeUndefined();
  });
});
