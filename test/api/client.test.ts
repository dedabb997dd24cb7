import { createServer } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type Budget, slidingWindowBudget } from '../../src/api/budget.ts';
import { ApiClient, parseRetryAfter } from '../../src/api/client.ts';
import {
  BudgetExhausted,
  Forbidden,
  InvalidRequest,
  MalformedResponse,
  NotFound,
  RateLimited,
  Stopped,
  Timeout,
  Unauthorized,
  Unavailable,
} from '../../src/api/errors.ts';
import { openSqliteStore } from '../../src/store/sqlite.ts';
import type { Store } from '../../src/store/types.ts';
import { ApiEmulator } from '../fakes/api-emulator.ts';
import { memoryLogger } from '../helpers/log.ts';
import { eventually } from '../helpers/net.ts';

const KEY = 'mint_test_secret_key_123';
const PROJECT = 'proj_docs';
const fastRetry = { retries: 2, minDelayMs: 5, maxDelayMs: 20, maxRetryAfterMs: 2_000 };

let api: ApiEmulator;
let logs: ReturnType<typeof memoryLogger>;
const client = (over: Partial<ConstructorParameters<typeof ApiClient>[0]> = {}) =>
  new ApiClient({
    baseUrl: api.url,
    apiKey: KEY,
    projectId: PROJECT,
    log: logs.log,
    retry: fastRetry,
    timeoutMs: 1_000,
    ...over,
  });

beforeEach(async () => {
  api = await ApiEmulator.start({
    apiKey: KEY,
    projectId: PROJECT,
    readOnlyKeys: ['mint_read_only_key'],
  });
  logs = memoryLogger([KEY]);
});
afterEach(async () => {
  await api.close();
});

describe('agent jobs', () => {
  it('creates a job with the Bearer key and the prompt, and reads the 201 answer', async () => {
    const job = await client().createJob('Add a quickstart');
    expect(job).toMatchObject({ status: 'active', prLink: null, source: { ref: 'main' } });
    const [req] = api.requestsTo('create');
    expect(req).toMatchObject({
      method: 'POST',
      authorization: `Bearer ${KEY}`,
      body: { prompt: 'Add a quickstart' },
      status: 201,
    });
  });

  it('sends a follow-up and gets the job back active', async () => {
    const c = client();
    const job = await c.createJob('first');
    api.complete(job.id, 'https://github.com/acme/docs/pull/1');
    const again = await c.sendMessage(job.id, 'also fix typos');
    expect(again.status).toBe('active');
    expect(api.jobs.get(job.id)?.messages).toEqual(['first', 'also fix typos']);
  });

  it('reads a job with missing optional fields: no prLink means no PR yet', async () => {
    const c = client();
    const job = await c.createJob('x');
    api.omitFields(job.id, ['prLink', 'source', 'model', 'archivedAt', 'createdAt']);
    expect(await c.getJob(job.id)).toMatchObject({ id: job.id, status: 'active', prLink: null });
  });

  it('treats a job without id or with an unknown status as a malformed answer', async () => {
    const c = client();
    const job = await c.createJob('x');
    api.omitFields(job.id, ['status']);
    await expect(c.getJob(job.id)).rejects.toThrow(MalformedResponse);
    api.inject('create', { wrongShape: true });
    await expect(c.createJob('y')).rejects.toThrow(/could not read/);
  });

  it('maps 400 details, 401, 403 and 404 to typed errors with plain messages', async () => {
    const c = client();
    api.inject('create', { status: 400, details: [{ path: ['prompt'], message: 'Too long' }] });
    const bad = await c.createJob('x').catch((e) => e);
    expect(bad).toBeInstanceOf(InvalidRequest);
    expect(bad.details).toEqual(['prompt: Too long']);
    await expect(client({ apiKey: 'mint_wrong_key_000' }).createJob('x')).rejects.toThrow(
      Unauthorized,
    );
    const ro = await client({ apiKey: 'mint_read_only_key' })
      .createJob('x')
      .catch((e) => e);
    expect(ro).toBeInstanceOf(Forbidden);
    expect(ro.message).toMatch(/read-only.*allowlist/);
    await expect(c.getJob('job_missing')).rejects.toThrow(NotFound);
    expect(api.requestsTo('get')).toHaveLength(1); // a 404 is an answer, not retried
  });

  it('retries a GET on 5xx and network resets, then succeeds', async () => {
    const c = client();
    const job = await c.createJob('x');
    api.inject('get', { status: 503 });
    api.inject('get', { reset: true });
    expect((await c.getJob(job.id)).id).toBe(job.id);
    expect(api.requestsTo('get')).toHaveLength(3);
  });

  it('makes a single short attempt when a read asks for it: no retry, its own timeout, a 429 passed on', async () => {
    const c = client({ timeoutMs: 10_000 });
    const job = await c.createJob('x');
    const once = { retries: 0, timeoutMs: 200 };
    api.inject('get', { status: 503 });
    await expect(c.getJob(job.id, once)).rejects.toThrow(Unavailable);
    api.inject('get', { slowMs: 5_000 });
    const slow = await c.getJob(job.id, once).catch((e: unknown) => e);
    expect(slow).toBeInstanceOf(Timeout);
    expect((slow as Timeout).message).toContain('within 200 ms');
    api.inject('get', { status: 429, retryAfterSec: 1 });
    const limited = await c.getJob(job.id, once).catch((e: unknown) => e);
    expect(limited).toMatchObject({ kind: 'rate_limited', retryAfterMs: 1_000 });
    expect(api.requestsTo('get')).toHaveLength(3); // one each
    // Never longer than the client's own timeout.
    api.inject('get', { slowMs: 5_000 });
    const capped = await client({ timeoutMs: 100 })
      .getJob(job.id, { retries: 0, timeoutMs: 60_000 })
      .catch((e: unknown) => e);
    expect((capped as Timeout).message).toContain('within 100 ms');
  });

  it('never resends a POST whose effect is unknown (5xx, reset, timeout)', async () => {
    const c = client();
    api.inject('create', { status: 500, tookEffect: true });
    const e1 = await c.createJob('a').catch((e) => e);
    expect(e1).toBeInstanceOf(Unavailable);
    expect(e1.applied).toBe('unknown');
    api.inject('create', { reset: true });
    await expect(c.createJob('b')).rejects.toThrow(Unavailable);
    api.inject('create', { slowMs: 1_500 });
    await expect(c.createJob('c')).rejects.toThrow(Timeout);
    expect(api.requestsTo('create')).toHaveLength(3);
  });

  it('resends a POST after a 429, waiting out Retry-After', async () => {
    api.inject('create', { status: 429, retryAfterSec: 1 });
    const started = Date.now();
    await client().createJob('x');
    const [first, second] = api.requestsTo('create');
    expect([first?.status, second?.status]).toEqual([429, 201]);
    expect(second!.at - first!.at).toBeGreaterThanOrEqual(950);
    expect(Date.now() - started).toBeGreaterThanOrEqual(950);
  });

  it('gives up on a 429 whose Retry-After is longer than it will wait, saying how long', async () => {
    api.inject('create', { status: 429, retryAfterSec: 600 });
    const err = await client()
      .createJob('x')
      .catch((e) => e);
    expect(err).toBeInstanceOf(RateLimited);
    expect(err.retryAfterMs).toBe(600_000);
    expect(api.requestsTo('create')).toHaveLength(1);
  });

  it('resends a POST when the connection was refused (it never reached the service)', async () => {
    const port = await freePort();
    await api.close();
    const c = new ApiClient({
      baseUrl: `http://127.0.0.1:${port}`,
      apiKey: KEY,
      projectId: PROJECT,
      log: logs.log,
      retry: { retries: 4, minDelayMs: 150, maxDelayMs: 300, maxRetryAfterMs: 1_000 },
    });
    const pending = c.createJob('x');
    await new Promise((r) => setTimeout(r, 100));
    api = await ApiEmulator.start({ apiKey: KEY, projectId: PROJECT, port });
    expect((await pending).status).toBe('active');
    expect(api.requestsTo('create')).toHaveLength(1);
  });

  it('reports a non-JSON body as malformed and never leaks the key into logs', async () => {
    api.inject('create', { malformed: true });
    await expect(client().createJob('x')).rejects.toThrow(/not JSON/);
    expect(logs.text()).not.toContain(KEY);
    expect(logs.text()).toContain('api.failed');
  });
});

describe('a key being checked (a workspace connecting its docs)', () => {
  const OWN = 'mint_own_project_key_0042';

  it('reads the project once with that key instead of the client\u2019s, spending no budget', async () => {
    api.addProject('proj_own', OWN);
    const spent: string[] = [];
    const budget = { take: async (op: string) => spent.push(op) } as unknown as Budget;
    const c = client({ apiKey: '', projectId: '', budgets: { agent: budget, analytics: budget } });
    await c.checkKey('proj_own', OWN, 500);
    expect(api.requests.map((r) => [r.path, r.authorization])).toEqual([
      ['/v1/agent/proj_own/jobs', `Bearer ${OWN}`],
    ]);
    expect(spent).toEqual([]);
  });

  it('tells a wrong key, a key of another project and an unknown project apart, in one attempt each', async () => {
    api.addProject('proj_own', OWN);
    api.addProject('proj_else', 'mint_else_project_key_0042');
    await expect(client().checkKey('proj_own', 'mint_wrong_key_00000', 500)).rejects.toThrow(
      Unauthorized,
    );
    await expect(client().checkKey('proj_else', OWN, 500)).rejects.toThrow(Forbidden);
    await expect(client().checkKey('proj_none', OWN, 500)).rejects.toThrow(NotFound);
    api.inject('jobs', { status: 503 });
    await expect(client().checkKey('proj_own', OWN, 500)).rejects.toThrow(Unavailable);
    api.inject('jobs', { slowMs: 1_000 });
    await expect(client().checkKey('proj_own', OWN, 100)).rejects.toThrow(Timeout);
    // The one retry table is not consulted again: a person waits in a modal.
    expect(api.requests).toHaveLength(5);
    expect(logs.text()).not.toContain(OWN);
  });
});

describe('stop', () => {
  const patient = { ...fastRetry, maxRetryAfterMs: 60_000 };

  it('cuts a Retry-After wait short: the call fails at once, saying nothing more was sent', async () => {
    const c = client({ retry: patient });
    api.inject('get', { status: 429, retryAfterSec: 30 });
    const pending = c.getJob('job_1').catch((e: unknown) => e);
    await eventually(() => api.requestsTo('get').length === 1, 'the first attempt');
    const stoppedAt = performance.now();
    c.stop();
    const err = await pending;
    expect(performance.now() - stoppedAt).toBeLessThan(500);
    expect(err).toBeInstanceOf(Stopped);
    expect(err).toMatchObject({ kind: 'stopped', applied: 'no', operation: 'job.get' });
    expect(api.requestsTo('get')).toHaveLength(1);
  });

  it('fails a create on the wire fast, saying it may have gone through', async () => {
    const c = client({ retry: patient, timeoutMs: 10_000 });
    api.inject('create', { slowMs: 5_000 });
    const pending = c.createJob('x').catch((e: unknown) => e);
    await eventually(() => api.requestsTo('create').length === 1, 'the create on the wire');
    const stoppedAt = performance.now();
    c.stop();
    const err = await pending;
    expect(performance.now() - stoppedAt).toBeLessThan(500);
    expect(err).toMatchObject({ kind: 'stopped', applied: 'unknown', operation: 'job.create' });
  });

  it('sends nothing once stopped', async () => {
    const c = client();
    c.stop();
    await expect(c.createJob('x')).rejects.toMatchObject({ kind: 'stopped', applied: 'no' });
    expect(api.requests).toHaveLength(0);
  });
});

describe('budget', () => {
  let store: Store;
  let budget: Budget;
  let clock = 0;
  beforeEach(async () => {
    store = await openSqliteStore(':memory:');
    clock = Date.parse('2026-11-22T10:00:00Z');
    budget = slidingWindowBudget(store, {
      key: 'agent:p',
      limit: 2,
      windowMs: 3_600_000,
      description: 'Agent budget',
      now: () => clock,
    });
  });
  afterEach(() => store.close());

  it('sends nothing once spent and says when the next slot opens', async () => {
    const c = client({ budgets: { agent: budget } });
    await c.createJob('1');
    clock += 60_000;
    await c.createJob('2');
    const err = await c.createJob('3').catch((e) => e);
    expect(err).toBeInstanceOf(BudgetExhausted);
    expect(err.retryAt.toISOString()).toBe('2026-11-22T11:00:00.000Z');
    expect(api.requestsTo('create')).toHaveLength(2);
  });

  it('counts every request that reached the service, and gives back only one that never did', async () => {
    const unreachable = client({
      baseUrl: `http://127.0.0.1:${await freePort()}`,
      budgets: { agent: budget },
    });
    const refused = await unreachable.createJob('1').catch((e) => e);
    expect(refused).toBeInstanceOf(Unavailable);
    expect(refused.applied).toBe('no');
    // Refused connections (first try and every retry) used nothing: both slots are free.
    const c = client({ budgets: { agent: budget } });
    api.inject('create', { status: 400, details: ['bad'] });
    await expect(c.createJob('2')).rejects.toThrow(InvalidRequest);
    await c.createJob('3');
    // The 400 reached the service and counts against its hourly budget.
    await expect(c.createJob('4')).rejects.toThrow(BudgetExhausted);
    expect(api.requestsTo('create')).toHaveLength(2);
  });

  it('says how many slots the window has left', async () => {
    expect(await budget.remaining()).toBe(2);
    await client({ budgets: { agent: budget } }).createJob('1');
    expect(await budget.remaining()).toBe(1);
    clock += 60_000;
    await client({ budgets: { agent: budget } }).createJob('2');
    expect(await budget.remaining()).toBe(0);
    clock += 3_600_000 - 60_000; // the first use has left the window
    expect(await budget.remaining()).toBe(1);
  });
});

describe('visitors', () => {
  it('follows offset paging until hasMore is false', async () => {
    api.setSite({ paths: 600 });
    const pages = [];
    for await (const p of client().visitorPages({
      dateFrom: '2026-11-01',
      dateTo: '2026-11-08',
      limit: 250,
    }))
      pages.push(p);
    const truth = api.truth('2026-11-01', '2026-11-08');
    expect(pages.flatMap((p) => p.visitors)).toHaveLength(truth.rows.length);
    expect(pages.at(-1)?.hasMore).toBe(false);
    expect(api.requestsTo('visitors').map((r) => r.query.offset)).toEqual(
      pages.map((_, i) => String(i * 250)),
    );
  });
});

it('parses Retry-After as seconds or an HTTP date', () => {
  expect(parseRetryAfter('7')).toBe(7000);
  expect(parseRetryAfter('Sun, 22 Nov 2026 10:00:30 GMT', Date.parse('2026-11-22T10:00:00Z'))).toBe(
    30_000,
  );
  expect(parseRetryAfter(null)).toBe(30_000);
  expect(parseRetryAfter('soon')).toBe(30_000);
});

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}
