import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ApiEmulator, type VisitorRow, type VisitorsTruth } from './api-emulator.ts';
import { latencyProfile } from './latency.ts';

const KEY = 'mint_test_admin_key';
const READ_ONLY = 'mint_test_read_only';
const PROJECT = 'proj_test';
// Pinned clock: the analytics model has traffic only up to "today".
const NOW = Date.parse('2026-06-15T12:00:00Z');
const JOBS = `/v2/agent/${PROJECT}/job`;
const VISITORS = `/v1/analytics/${PROJECT}/visitors`;

let api: ApiEmulator;

beforeEach(async () => {
  api = await ApiEmulator.start({
    apiKey: KEY,
    projectId: PROJECT,
    readOnlyKeys: [READ_ONLY],
    now: () => NOW,
  });
});
afterEach(() => api.close());

/** The fields the tests read; expect() checks the rest. */
interface Body {
  id?: string;
  status?: string;
  source?: unknown;
  details?: { path?: unknown }[];
  visitors?: VisitorRow[];
  totals?: unknown;
  hasMore?: boolean;
}

interface Answer {
  status: number;
  headers: Headers;
  text: string;
  json: Body | undefined;
}

async function call(
  method: 'GET' | 'POST',
  path: string,
  opts: { body?: unknown; key?: string | null; signal?: AbortSignal } = {},
): Promise<Answer> {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  const key = opts.key === undefined ? KEY : opts.key;
  if (key !== null) headers.authorization = `Bearer ${key}`;
  const body =
    opts.body === undefined || typeof opts.body === 'string'
      ? opts.body
      : JSON.stringify(opts.body);
  const res = await fetch(api.url + path, { method, headers, body, signal: opts.signal });
  const text = await res.text();
  let json: Body | undefined;
  try {
    json = JSON.parse(text) as Body;
  } catch {}
  return { status: res.status, headers: res.headers, text, json };
}

const create = (prompt: unknown = 'Document the webhooks API') =>
  call('POST', JOBS, { body: { prompt } });

async function createdId(): Promise<string> {
  const r = await create();
  expect(r.status).toBe(201);
  return r.json?.id ?? '';
}

describe('agent jobs', () => {
  it('create answers 201 with an active AgentJob and keeps the prompt', async () => {
    const r = await create('Fix the typo on /quickstart');
    expect(r.status).toBe(201);
    expect(r.json).toEqual({
      id: expect.stringMatching(/^job_/),
      status: 'active',
      source: { repository: 'https://github.com/acme/docs', ref: 'main' },
      model: 'claude-sonnet-4',
      prLink: null,
      createdAt: new Date(NOW).toISOString(),
      archivedAt: null,
    });
    expect(api.createdJobs().map((j) => j.id)).toEqual([r.json?.id]);
    expect(api.jobs.get(r.json?.id ?? '')?.messages).toEqual(['Fix the typo on /quickstart']);
  });

  it('rejects a missing, empty or malformed prompt with 400 and details', async () => {
    for (const body of [{}, { prompt: '' }, { prompt: 42 }, '{"prompt":', '[]']) {
      const r = await call('POST', JOBS, { body });
      expect(r.status).toBe(400);
      expect(r.json).toMatchObject({
        error: 'Invalid request',
        details: [{ message: expect.any(String) }],
      });
    }
    expect((await create('')).json?.details?.[0]?.path).toEqual(['prompt']);
    expect(api.jobs.size).toBe(0);
  });

  it('message answers 200, reactivates the job and keeps prLink', async () => {
    const id = await createdId();
    api.complete(id, 'https://github.com/acme/docs/pull/7');
    expect((await call('GET', `${JOBS}/${id}`)).json?.status).toBe('completed');

    const r = await call('POST', `${JOBS}/${id}/message`, {
      body: { prompt: 'Also fix the title' },
    });
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({
      id,
      status: 'active',
      prLink: 'https://github.com/acme/docs/pull/7',
    });
    expect(api.jobs.get(id)?.messages).toEqual(['Document the webhooks API', 'Also fix the title']);

    api.fail(id);
    expect((await call('GET', `${JOBS}/${id}`)).json?.status).toBe('failed');
  });

  it('message: unknown job 404, archived job 400, empty prompt 400', async () => {
    const unknown = await call('POST', `${JOBS}/job_nope/message`, { body: { prompt: 'x' } });
    expect(unknown).toMatchObject({ status: 404, json: { error: 'Job not found' } });

    const id = await createdId();
    const empty = await call('POST', `${JOBS}/${id}/message`, { body: { prompt: '' } });
    expect(empty.status).toBe(400);

    api.archive(id);
    const got = await call('GET', `${JOBS}/${id}`);
    expect(got.json).toMatchObject({ status: 'archived', archivedAt: new Date(NOW).toISOString() });
    const r = await call('POST', `${JOBS}/${id}/message`, { body: { prompt: 'more' } });
    expect(r.status).toBe(400);
    expect(r.json).toMatchObject({ error: 'Invalid request', details: [{ path: ['id'] }] });
  });

  it('get answers 200, then 404 after forget', async () => {
    const id = await createdId();
    expect((await call('GET', `${JOBS}/${id}`)).status).toBe(200);
    api.forget(id);
    expect(await call('GET', `${JOBS}/${id}`)).toMatchObject({
      status: 404,
      json: { error: 'Job not found' },
    });
    expect(api.createdJobs()).toHaveLength(1);
  });

  it('v1 jobs list: a project’s jobs newest first, skip/take checked, 404 for an unknown project', async () => {
    const first = await createdId();
    const second = await createdId();
    api.complete(first, 'https://github.com/acme/docs/pull/1');
    const all = await call('GET', `/v1/agent/${PROJECT}/jobs`);
    expect(all.status).toBe(200);
    expect(JSON.parse(all.text)).toEqual({
      allSessions: [
        {
          sessionId: second,
          haulted: false,
          haultReason: 'processing',
          createdAt: expect.any(String),
        },
        {
          sessionId: first,
          haulted: true,
          haultReason: 'completed',
          pullRequestLink: 'https://github.com/acme/docs/pull/1',
          createdAt: expect.any(String),
        },
      ],
    });
    const one = JSON.parse((await call('GET', `/v1/agent/${PROJECT}/jobs?take=1&skip=1`)).text);
    expect(one.allSessions.map((x: { sessionId: string }) => x.sessionId)).toEqual([first]);
    const bad = await call('GET', `/v1/agent/${PROJECT}/jobs?take=101`);
    expect(bad).toMatchObject({ status: 400, json: { details: [{ path: ['take'] }] } });
    const unknown = await call('GET', '/v1/agent/proj_nope/jobs?take=1');
    expect(unknown).toMatchObject({ status: 404, json: { error: 'Project not found' } });
    expect((await call('GET', `/v1/agent/${PROJECT}/jobs`, { key: null })).status).toBe(401);
    expect((await call('POST', `/v1/agent/${PROJECT}/jobs`)).status).toBe(404);
    expect(api.requestsTo('jobs')).toHaveLength(5);
    expect(api.requests.filter((r) => r.kind === 'create')).toHaveLength(2);
  });

  it('omitFields and setJob shape the JSON', async () => {
    const id = await createdId();
    api.omitFields(id, ['prLink', 'archivedAt', 'source.ref']);
    const r = await call('GET', `${JOBS}/${id}`);
    expect(r.json).not.toHaveProperty('prLink');
    expect(r.json).not.toHaveProperty('archivedAt');
    expect(r.json?.source).toEqual({ repository: 'https://github.com/acme/docs' });

    api.setJob('job_seeded', { status: 'completed', prLink: null });
    expect((await call('GET', `${JOBS}/job_seeded`)).json).toMatchObject({ status: 'completed' });
    expect(() => api.complete('job_typo', null)).toThrow(/no job/);
  });
});

describe('auth', () => {
  it('401 without or with a wrong key, on every route', async () => {
    for (const key of [null, 'mint_wrong']) {
      for (const [method, path] of [
        ['POST', JOBS],
        ['GET', `${JOBS}/job_x`],
        ['POST', `${JOBS}/job_x/message`],
        ['GET', VISITORS],
      ] as const) {
        const r = await call(method, path, {
          key,
          body: method === 'POST' ? { prompt: 'x' } : undefined,
        });
        expect(r).toMatchObject({ status: 401, json: { error: 'Unauthorized' } });
      }
    }
    expect(api.jobs.size).toBe(0);
  });

  it('403 for a read-only key on POST, reads allowed; 404 for another project', async () => {
    const r = await call('POST', JOBS, { key: READ_ONLY, body: { prompt: 'x' } });
    expect(r).toMatchObject({
      status: 403,
      json: { error: 'Forbidden: this API key is read-only' },
    });
    expect((await call('GET', `${VISITORS}?dateFrom=2026-06-01`, { key: READ_ONLY })).status).toBe(
      200,
    );
    const other = await call('POST', '/v2/agent/proj_other/job', { body: { prompt: 'x' } });
    expect(other).toMatchObject({ status: 404, json: { error: 'Project not found' } });
    expect(api.requests.at(-1)).toMatchObject({ authorization: `Bearer ${KEY}`, status: 404 });
  });
});

describe('faults', () => {
  it('5xx: consumed in order, "*" matches any kind, no effect unless tookEffect', async () => {
    api.inject('*', { status: 503 }, 2);
    api.inject('create', { status: 500 });
    api.inject('create', { status: 502, tookEffect: true });

    const first = await create();
    expect(first.status).toBe(503);
    expect(first.headers.get('content-type')).toMatch(/text\/html/);
    expect((await call('GET', `${JOBS}/job_x`)).status).toBe(503);
    expect(await create()).toMatchObject({ status: 500, json: { error: 'Internal server error' } });
    expect(api.jobs.size).toBe(0);
    expect((await create()).status).toBe(502);
    expect(api.jobs.size).toBe(1); // the gateway failed after the backend created it
    expect((await create()).status).toBe(201);

    expect(api.requestsTo('create').map((r) => r.status)).toEqual([503, 500, 502, 201]);
    expect(api.requestsTo('create')[0]?.body).toEqual({ prompt: 'Document the webhooks API' });
  });

  it('429 carries Retry-After', async () => {
    api.inject('message', { status: 429, retryAfterSec: 7 });
    const id = await createdId();
    const r = await call('POST', `${JOBS}/${id}/message`, { body: { prompt: 'x' } });
    expect(r).toMatchObject({ status: 429, json: { error: 'Rate limit exceeded' } });
    expect(r.headers.get('retry-after')).toBe('7');
    expect(api.jobs.get(id)?.messages).toHaveLength(1);
  });

  it('401, 403, 404 and 400 on demand, even with a good request', async () => {
    const id = await createdId();
    api.inject('get', { status: 401 });
    api.inject('get', { status: 403 });
    api.inject('get', { status: 404 });
    api.inject('visitors', { status: 400, details: [{ message: 'dateFrom is too far back' }] });
    expect((await call('GET', `${JOBS}/${id}`)).json).toEqual({ error: 'Unauthorized' });
    expect((await call('GET', `${JOBS}/${id}`)).status).toBe(403);
    expect((await call('GET', `${JOBS}/${id}`)).json).toEqual({ error: 'Job not found' });
    expect((await call('GET', `${JOBS}/${id}`)).status).toBe(200);
    expect((await call('GET', VISITORS)).json).toEqual({
      error: 'Invalid query parameters',
      details: [{ message: 'dateFrom is too far back' }],
    });
  });

  it('slowMs answers late, and the request takes effect even if the client gives up', async () => {
    api.inject('get', { slowMs: 120 });
    const id = await createdId();
    const started = Date.now();
    expect((await call('GET', `${JOBS}/${id}`)).status).toBe(200);
    expect(Date.now() - started).toBeGreaterThanOrEqual(100);

    api.inject('create', { slowMs: 5_000 });
    const signal = AbortSignal.timeout(50);
    await expect(call('POST', JOBS, { body: { prompt: 'slow one' }, signal })).rejects.toThrow();
    expect(api.createdJobs().map((j) => j.messages[0])).toContain('slow one');
    expect(api.requestsTo('create').at(-1)?.status).toBeNull(); // nothing reached the client
  });

  it('reset takes effect, refuse does not; both are recorded without a status', async () => {
    api.inject('create', { reset: true });
    await expect(create('reset')).rejects.toThrow();
    expect(api.createdJobs().map((j) => j.messages[0])).toEqual(['reset']);

    api.inject('create', { refuse: true });
    await expect(create('refused')).rejects.toThrow();
    expect(api.createdJobs()).toHaveLength(1);
    expect(api.requestsTo('create').map((r) => [r.status, r.body])).toEqual([
      [null, { prompt: 'reset' }],
      [null, { prompt: 'refused' }],
    ]);
  });

  it('malformed and wrongShape answer 2xx after taking effect', async () => {
    api.inject('create', { malformed: true });
    const r = await create();
    expect(r.status).toBe(201);
    expect(r.json).toBeUndefined();
    expect(r.text).toMatch(/^<!DOCTYPE html>/);
    expect(api.jobs.size).toBe(1);

    api.inject('get', { wrongShape: true });
    api.inject('visitors', { wrongShape: true });
    const id = api.createdJobs()[0]!.id;
    expect((await call('GET', `${JOBS}/${id}`)).json).toMatchObject({ id, status: 'exploded' });
    const v = await call('GET', VISITORS);
    expect(v.status).toBe(200);
    expect(Array.isArray(v.json?.visitors)).toBe(false);
  });
});

describe('latency', () => {
  it('the realistic profile: create 1 s, get and analytics 150 ms, each ±20 %, recorded', async () => {
    api.useLatency(latencyProfile('realistic'));
    const created = await Promise.all(
      [1, 2, 3].map((i) => call('POST', JOBS, { body: { prompt: `p${i}` } })),
    );
    const ids = created.map((c) => c.json?.id);
    await Promise.all([
      ...ids.map((id) => call('GET', `${JOBS}/${id}`)),
      ...ids.map(() => call('GET', VISITORS)),
      call('GET', `/v1/analytics/${PROJECT}/searches`),
    ]);
    const band = (kind: Parameters<ApiEmulator['requestsTo']>[0], lo: number, hi: number) => {
      const ds = api.requestsTo(kind).map((r) => r.delayMs);
      expect(ds.length).toBeGreaterThan(0);
      for (const d of ds) {
        expect(d).toBeGreaterThanOrEqual(lo);
        expect(d).toBeLessThanOrEqual(hi);
      }
      return ds;
    };
    expect(new Set(band('create', 800, 1_200)).size).toBeGreaterThan(1);
    band('get', 120, 180);
    band('visitors', 120, 180);
    band('searches', 120, 180);
    // A request answered late was recorded on arrival and answered after its delay.
    const [first] = api.requestsTo('create');
    expect(first!.answeredAt! - first!.at).toBeGreaterThanOrEqual(first!.delayMs - 1);
  });

  it('a slow kind answers after a fast one sent later; zero turns it off', async () => {
    api.setLatency('create', { ms: 300, jitter: 0.2 });
    const order: string[] = [];
    const slow = call('POST', JOBS, { body: { prompt: 'slow' } }).then(() => order.push('create'));
    await new Promise<void>((resolve) => {
      const stop = api.onRequest(() => {
        stop();
        resolve();
      });
      if (api.requestsTo('create').length > 0) resolve();
    });
    await call('GET', `${JOBS}/job_unknown`).then(() => order.push('get'));
    await slow;
    expect(order).toEqual(['get', 'create']);
    api.useLatency(latencyProfile('zero'));
    await call('POST', JOBS, { body: { prompt: 'fast' } });
    expect(api.requestsTo('create').at(-1)?.delayMs).toBe(0);
  });
});

describe('request log', () => {
  it('onRequest sees each request once it is recorded, before it is answered', async () => {
    const seen: { kind: unknown; body: unknown; status: number | null }[] = [];
    const stop = api.onRequest((r) => seen.push({ kind: r.kind, body: r.body, status: r.status }));
    api.inject('create', { refuse: true });
    await expect(create('refused')).rejects.toThrow();
    const id = await createdId();
    await call('POST', `${JOBS}/${id}/message`, { body: { prompt: 'more' } });
    stop();
    await call('GET', `${JOBS}/${id}`);
    expect(seen).toEqual([
      { kind: 'create', body: { prompt: 'refused' }, status: null },
      { kind: 'create', body: { prompt: 'Document the webhooks API' }, status: null },
      { kind: 'message', body: { prompt: 'more' }, status: null },
    ]);
    expect(api.requests).toHaveLength(4);
  });
});

describe('visitors analytics', () => {
  const FROM = '2026-03-01';
  const TO = '2026-06-01';

  async function allPages(limit: number, query = `dateFrom=${FROM}&dateTo=${TO}`) {
    const rows: VisitorRow[] = [];
    const totals: unknown[] = [];
    for (let offset = 0; ; offset += limit) {
      const r = await call('GET', `${VISITORS}?${query}&limit=${limit}&offset=${offset}`);
      expect(r.status).toBe(200);
      rows.push(...(r.json?.visitors ?? []));
      totals.push(r.json?.totals);
      if (!r.json?.hasMore) break;
    }
    return { rows, totals };
  }
  const byPath = (rows: VisitorRow[]) => [...rows].sort((a, b) => a.path.localeCompare(b.path));

  it('paging over every page reproduces truth() exactly', async () => {
    const truth = api.truth(FROM, TO);
    expect(truth.rows.length).toBeGreaterThan(500);
    expect(truth.rows.length).toBeLessThan(1200); // some pages had no traffic at all
    const { rows, totals } = await allPages(250);
    expect(byPath(rows)).toEqual(byPath(truth.rows));
    for (const t of totals) expect(t).toEqual(truth.totals);

    const first = await call('GET', `${VISITORS}?dateFrom=${FROM}&dateTo=${TO}`);
    expect(first.json?.visitors).toHaveLength(50); // default limit
    expect(first.json?.hasMore).toBe(true);
    const last = await call(
      'GET',
      `${VISITORS}?dateFrom=${FROM}&dateTo=${TO}&offset=${truth.rows.length - 1}`,
    );
    expect(last.json).toMatchObject({ visitors: [truth.rows.at(-1)], hasMore: false });
  });

  it('counts are deduplicated and site totals are not the sum of pages', () => {
    const { totals, rows } = api.truth(FROM, TO);
    const dedupe = (c: { human: number; ai: number; total: number }) => {
      expect(c.total).toBeLessThanOrEqual(c.human + c.ai);
      expect(c.total).toBeGreaterThanOrEqual(Math.max(c.human, c.ai));
      expect(Number.isInteger(c.total) && c.total > 0).toBe(true);
    };
    rows.forEach(dedupe);
    dedupe(totals);
    expect(rows.some((r) => r.total < r.human + r.ai)).toBe(true);
    const sumHuman = rows.reduce((s, r) => s + r.human, 0);
    expect(totals.human).toBeLessThan(sumHuman);
    expect(totals.human).toBeGreaterThan(sumHuman / 2);
  });

  it('row order is deterministic but not sorted by any count', async () => {
    const { rows } = api.truth(FROM, TO);
    for (const key of ['total', 'human', 'ai'] as const) {
      const v = rows.map((r) => r[key]);
      expect(v.some((x, i) => i > 0 && x > v[i - 1]!)).toBe(true);
      expect(v.some((x, i) => i > 0 && x < v[i - 1]!)).toBe(true);
    }
    const other = await ApiEmulator.start({ apiKey: KEY, projectId: PROJECT, now: () => NOW });
    expect(other.truth(FROM, TO)).toEqual(api.truth(FROM, TO));
    await other.close();
  });

  it('dateTo is exclusive, some days the whole site is zero, ISO date-times accepted', async () => {
    const day = (d: number) =>
      new Date(Date.parse(FROM) + d * 86_400_000).toISOString().slice(0, 10);
    const days: VisitorsTruth[] = [];
    for (let d = 0; d < 92; d++) days.push(api.truth(day(d), day(d + 1)));
    expect(days.filter((t) => t.rows.length === 0 && t.totals.total === 0).length).toBeGreaterThan(
      0,
    );
    const sum = (ts: VisitorsTruth[], path: string) =>
      ts.reduce((s, t) => s + (t.rows.find((r) => r.path === path)?.human ?? 0), 0);
    const range = api.truth(day(0), day(5));
    for (const row of range.rows.slice(0, 20))
      expect(row.human).toBe(sum(days.slice(0, 5), row.path));

    const iso = await call(
      'GET',
      `${VISITORS}?dateFrom=${day(0)}T00:00:00Z&dateTo=${day(5)}T00:00:00.000Z&limit=250`,
    );
    expect(iso.json?.totals).toEqual(range.totals);
    expect(api.truth('2030-01-01', '2030-02-01').rows).toEqual([]); // the future has no visitors
  });

  it('invalid parameters answer 400 with the analytics error body', async () => {
    for (const q of [
      'limit=0',
      'limit=251',
      'limit=abc',
      'limit=1.5',
      'offset=-1',
      'dateFrom=2026-02-30',
      'dateTo=yesterday',
      'dateFrom=2026-05-01&dateTo=2026-05-01',
    ]) {
      const r = await call('GET', `${VISITORS}?${q}`);
      expect(r.status, q).toBe(400);
      expect(r.json).toMatchObject({
        error: 'Invalid query parameters',
        details: [{ message: expect.any(String) }],
      });
    }
    expect((await call('GET', `${VISITORS}?limit=250&offset=0`)).status).toBe(200);
  });

  it('shiftOrder makes an offset pager see one row twice and miss another', async () => {
    const truth = api.truth(FROM, TO);
    api.inject('visitors', { shiftOrder: true }); // the first page sees the moved row
    const { rows } = await allPages(100);
    expect(rows[0]).toEqual(truth.rows.at(-1));
    expect(rows).toHaveLength(truth.rows.length);
    const seen = new Set(rows.map((r) => r.path));
    expect(seen.size).toBe(truth.rows.length - 1);
    expect(truth.rows.filter((r) => !seen.has(r.path))).toEqual([truth.rows[99]]);
    expect((await allPages(100)).rows).toEqual(truth.rows); // consumed: order is back
  });
});

it('close() does not wait for a slow request', async () => {
  const local = await ApiEmulator.start({ apiKey: KEY, projectId: PROJECT });
  local.inject('get', { slowMs: 10_000 });
  const pending = fetch(`${local.url}${JOBS}/job_x`, {
    headers: { authorization: `Bearer ${KEY}` },
  });
  await new Promise((r) => setTimeout(r, 30));
  const started = Date.now();
  await local.close();
  await expect(pending).rejects.toThrow();
  expect(Date.now() - started).toBeLessThan(500);
});
