/**
 * Stateful emulator of Mintlify's background agent API (v2, and the v1 list of a project's
 * jobs) and visitors analytics export (v1), with fault injection, for integration tests.
 *
 * From the official OpenAPI documents (real behaviour):
 * - routes and methods; create answers 201, message and get answer 200, with an AgentJob;
 * - every AgentJob field is optional; `source.ref`, `prLink` and `archivedAt` are nullable;
 * - create/message 400 and 429 use the Error schema `{error}`; get/message 404 likewise;
 * - `GET /v1/agent/{projectId}/jobs` (deprecated, still documented): `skip` >= 0 (default 0),
 *   `take` 1..100 (default 12), 200 `{allSessions: [...]}`, newest first; the project's jobs
 *   as sessions (`sessionId`, `haulted`, `haultReason`, `pullRequestLink`, `createdAt`);
 * - visitors: limit 1..250 (default 50), offset >= 0 (default 0), dates YYYY-MM-DD or ISO 8601,
 *   dateTo exclusive, 400 body `{error, details: [{message}]}`, `total` deduplicated.
 * Our assumptions (undocumented):
 * - 401 `{error:'Unauthorized'}`, 403 for read-only keys on POST, 404 `{error:'Project not found'}`
 *   (the admin spec lists none of these for the agent routes), on the v1 jobs list too; a bad
 *   `skip`/`take` there is 400 `{error:'Invalid request', details}` like the v2 routes;
 * - agent 400 bodies carry zod-style `details: [{path, message}]` (the admin Error schema only
 *   declares `error`); a message to an archived job is 400 (the spec lists no 409);
 * - a follow-up makes the job `active` again but keeps `prLink` (the follow-up lands on the same PR);
 * - visitors: missing dateTo = tomorrow (today included), missing dateFrom = dateTo - 30 days;
 *   dateFrom >= dateTo is 400; a date-time dateTo includes the day it falls in (counts are daily);
 *   an ISO date-time without a zone is UTC; row order is stable but unrelated to the counts;
 *   a range's page counts are sums of daily uniques (the real service counts distinct visitors).
 */
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import {
  InsightsData,
  type InsightsKind,
  insightsWrongShape,
  isInsightsKind,
} from './analytics-insights.ts';
import { type Latency, LatencyModel, type LatencyProfile } from './latency.ts';

export type JobStatus = 'active' | 'completed' | 'archived' | 'failed';
export interface AgentJob {
  id: string;
  status: JobStatus;
  source: { repository: string; ref: string | null };
  model: string;
  prLink: string | null;
  createdAt: string;
  archivedAt: string | null;
}
/** A job as stored: the wire fields plus every prompt it received (create first). */
export interface EmulatedJob extends AgentJob {
  messages: string[];
}
export type JobField = keyof AgentJob | 'source.repository' | 'source.ref';

export type RequestKind = 'create' | 'message' | 'get' | 'jobs' | 'visitors' | InsightsKind;
export type Fault =
  /** Status faults answer before auth and validation, like a gateway. `tookEffect`: the backend
   * acted before the gateway failed (default: it did not). */
  | { status: 500 | 502 | 503; body?: unknown; tookEffect?: boolean }
  /** Without `retryAfterSec`, the 429 carries no Retry-After header. */
  | { status: 429; retryAfterSec?: number }
  | { status: 401 | 403 | 404; body?: unknown }
  | { status: 400; details: unknown[] }
  /** Processed at once, answered after the delay: the effect happens even if the client gives up. */
  | { slowMs: number }
  /** 2xx with a non-JSON body; the request took effect (a proxy mangled the answer). Like
   * wrongShape, it only replaces a successful answer: a request that fails is answered as usual. */
  | { malformed: true }
  /** 2xx with JSON that does not match the schema; the request took effect. */
  | { wrongShape: true }
  /** Socket destroyed AFTER processing: took effect, but the client cannot know (the ambiguous case). */
  | { reset: true }
  /** Socket destroyed BEFORE processing: did not take effect. */
  | { refuse: true }
  /** Visitors only: this answer's row order is rotated by one, as if the ranking moved between pages. */
  | { shiftOrder: true };

export interface RecordedRequest {
  method: string;
  path: string;
  query: Record<string, string>;
  authorization: string | undefined;
  /** Parsed JSON when it parses, else the raw text; undefined when empty. */
  body: unknown;
  /** What was sent; null when the socket was destroyed without an answer. */
  status: number | null;
  at: number;
  /** When the answer was sent; null while in flight or when none was. */
  answeredAt: number | null;
  /** How long a successful answer was held back (the latency set for the kind, or slowMs). */
  delayMs: number;
  kind: RequestKind | null;
  fault: Fault | undefined;
}

export interface VisitorCounts {
  human: number;
  ai: number;
  total: number;
}
export interface VisitorRow extends VisitorCounts {
  path: string;
}
export interface VisitorsTruth {
  totals: VisitorCounts;
  rows: VisitorRow[];
}

interface Reply {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
}
type Route = { kind: RequestKind; projectId: string; jobId: string | undefined };

const DAY_MS = 86_400_000;
/** No traffic before the site went live; keeps all-time ranges cheap. */
const SITE_LAUNCH_DAY = Date.UTC(2025, 0, 1) / DAY_MS;
const DEFAULT_RANGE_DAYS = 30;
const REALISTIC_PATHS = [
  '/',
  '/quickstart',
  '/installation',
  '/api-reference/introduction',
  '/guides/authentication',
  '/changelog',
];
// Site totals are a fraction of the page sums: one visitor reads several pages.
const HUMAN_SITE_FRACTION = 0.6;
const AI_SITE_FRACTION = 0.45;

/** 32-bit integer hash of three numbers (murmur3 finaliser rounds); deterministic across runs. */
export function hash3(a: number, b: number, c: number): number {
  return mix(mix(mix(0x9e3779b9, a), b), c) >>> 0;
}

function mix(h: number, x: number): number {
  let m = Math.imul(h ^ (x | 0), 0x85ebca6b);
  m ^= m >>> 13;
  m = Math.imul(m, 0xc2b2ae35);
  return m ^ (m >>> 16);
}

/** Parses YYYY-MM-DD or ISO 8601 date-time to epoch ms, or null when it is not a real date. */
export function parseDate(s: string): number | null {
  const m =
    /^(\d{4})-(\d{2})-(\d{2})(T\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})?)?$/.exec(
      s,
    );
  if (!m) return null;
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const day = new Date(Date.UTC(y, mo - 1, d));
  if (day.getUTCFullYear() !== y || day.getUTCMonth() !== mo - 1 || day.getUTCDate() !== d)
    return null;
  if (!m[4]) return day.getTime();
  const ms = Date.parse(m[5] ? s : `${s}Z`);
  return Number.isNaN(ms) ? null : ms;
}

export class ApiEmulator {
  readonly url: string;
  readonly jobs = new Map<string, EmulatedJob>();
  readonly requests: RecordedRequest[] = [];
  private readonly server: Server;
  private readonly sockets = new Set<Socket>();
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly faults: {
    kind: RequestKind | '*';
    fault: Fault;
    left: number;
    when: ((query: Record<string, string>) => boolean) | undefined;
  }[] = [];
  private readonly latency = new LatencyModel();
  private readonly created: EmulatedJob[] = [];
  private readonly omitted = new Map<string, JobField[]>();
  private readonly arrivals = new Set<(rec: RecordedRequest) => void>();
  private readonly opts: { apiKey: string; projectId: string; readOnlyKeys: string[] };
  /**
   * The organisation's projects beyond the first, with a key of their own or not: the admin
   * key works for every project, a project's own key only for it.
   */
  private readonly projects = new Map<string, string | undefined>();
  /** Which project each job belongs to: asked under another, it is not found. */
  private readonly jobProject = new Map<string, string>();
  private readonly now: () => number;
  private site = { paths: [] as string[], seed: 1, base: [] as number[], popular: [] as boolean[] };
  private cache: { key: string; value: VisitorsTruth } | undefined;
  /** Searches, assistant conversations and feedback (analytics-insights.ts): seeded, queryable. */
  readonly insights: InsightsData;

  private constructor(
    server: Server,
    url: string,
    opts: { apiKey: string; projectId: string; readOnlyKeys?: string[]; now?: () => number },
  ) {
    this.server = server;
    this.url = url;
    this.opts = { ...opts, readOnlyKeys: opts.readOnlyKeys ?? [] };
    this.now = opts.now ?? Date.now;
    this.insights = new InsightsData(this.now);
    this.setSite({ paths: 1200 });
    server.on('connection', (s) => {
      this.sockets.add(s);
      s.on('close', () => this.sockets.delete(s));
    });
    server.on('request', (req, res) => void this.receive(req, res));
  }

  /** `now` lets tests pin the clock used for createdAt and the default analytics range. */
  static async start(opts: {
    apiKey: string;
    projectId: string;
    readOnlyKeys?: string[];
    now?: () => number;
    /** A fixed port, e.g. to come up where a client is already being refused. */
    port?: number;
  }): Promise<ApiEmulator> {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(opts.port ?? 0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    return new ApiEmulator(server, `http://127.0.0.1:${port}`, opts);
  }

  async close(): Promise<void> {
    for (const t of this.timers) clearTimeout(t);
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    for (const s of this.sockets) s.destroy(); // else a slow or keep-alive request holds close()
    await closed;
  }

  // ---- test controls: projects ----

  /** Another project of the organisation, optionally with its own API key. */
  addProject(projectId: string, ownKey?: string): void {
    this.projects.set(projectId, ownKey);
  }

  /** The project a created job belongs to. */
  projectOf(jobId: string): string | undefined {
    return this.jobProject.get(jobId);
  }

  // ---- test controls: jobs ----

  /** Jobs created through the API, in order (forgotten ones included). */
  createdJobs(): EmulatedJob[] {
    return [...this.created];
  }

  /**
   * Patches a job, creating it with defaults when the id is unknown (to seed state); in
   * `projectId` (another project of the organisation's) when given, else the default one.
   */
  setJob(id: string, patch: Partial<EmulatedJob>, projectId?: string): EmulatedJob {
    const job = this.jobs.get(id) ?? this.newJob(id, patch.messages?.[0] ?? 'seeded');
    Object.assign(job, patch, { id });
    this.jobs.set(id, job);
    if (projectId !== undefined) this.jobProject.set(id, projectId);
    return job;
  }

  complete(id: string, prLink: string | null): EmulatedJob {
    return Object.assign(this.existing(id), { status: 'completed', prLink });
  }

  fail(id: string): EmulatedJob {
    return Object.assign(this.existing(id), { status: 'failed' });
  }

  archive(id: string): EmulatedJob {
    const archivedAt = new Date(this.now()).toISOString();
    return Object.assign(this.existing(id), { status: 'archived', archivedAt });
  }

  /** Throws on an unknown id, so a typo in a test fails loudly instead of seeding a job. */
  private existing(id: string): EmulatedJob {
    const job = this.jobs.get(id);
    if (!job) throw new Error(`ApiEmulator: no job ${id}`);
    return job;
  }

  /** The service no longer knows the job: get and message answer 404. */
  forget(id: string): void {
    this.jobs.delete(id);
  }

  /** Leaves these fields out of the job's JSON from now on ('source.ref' for nested ones). */
  omitFields(id: string, fields: JobField[]): void {
    this.omitted.set(id, fields);
  }

  // ---- test controls: faults and request log ----

  /**
   * Queues a fault for the next `times` requests of `kind`; queued faults are used in order.
   * `when` picks the requests it applies to by their query (e.g. only pages after the first,
   * only the previous period): the others are answered as usual.
   */
  inject(
    kind: RequestKind | '*',
    fault: Fault,
    times = 1,
    when?: (query: Record<string, string>) => boolean,
  ): void {
    if ('shiftOrder' in fault && kind !== 'visitors' && kind !== '*') {
      throw new Error('ApiEmulator: shiftOrder only applies to visitors'); // would never be used
    }
    this.faults.push({ kind, fault, left: times, when });
  }

  /** Drops every queued fault: the service is healthy again. */
  clearFaults(): void {
    this.faults.length = 0;
  }

  /**
   * Every answer of this kind (`'*'`: of every kind without its own) takes that long (0 for
   * none), like a busy backend; the request takes effect at once. With `{ ms, jitter }` each
   * answer takes ms ± jitter × ms, the same sequence in every run (test/fakes/latency.ts).
   */
  setLatency(kind: RequestKind | '*', latency: Latency): void {
    this.latency.set(kind, latency);
  }

  /** A benchmark's latency profile: create, message, get, and every analytics read. */
  useLatency(profile: LatencyProfile): void {
    const { create, message, get, analytics } = profile.api;
    this.latency.set('create', create);
    this.latency.set('message', message);
    this.latency.set('get', get);
    this.latency.set('*', analytics); // visitors and the insights reads
  }

  /** Restarts the jitter sequence from `seed` (default 1): the same calls get the same delays. */
  seedLatency(seed: number): void {
    this.latency.reseed(seed);
  }

  requestsTo(kind: RequestKind): RecordedRequest[] {
    return this.requests.filter((r) => r.kind === kind);
  }

  /**
   * Calls `listener` with each request as soon as it is recorded (body read, nothing answered
   * yet, faults included); returns the unsubscribe. `at` is a wall clock in whole ms: a
   * benchmark that needs finer time reads its own clock here.
   */
  onRequest(listener: (rec: RecordedRequest) => void): () => void {
    this.arrivals.add(listener);
    return () => void this.arrivals.delete(listener);
  }

  // ---- test controls: analytics ----

  /** Replaces the site: realistic paths first, then `/guides/page-NNNN` up to `paths` in all. */
  setSite(opts: { paths: number; seed?: number; popularPaths?: readonly string[] }): void {
    // `popularPaths` replaces the realistic ones (the popular head of the site).
    const head = opts.popularPaths ?? REALISTIC_PATHS;
    const generated = Array.from(
      { length: Math.max(0, opts.paths - head.length) },
      (_, i) => `/guides/page-${String(i).padStart(4, '0')}`,
    );
    const paths = [...head, ...generated].slice(0, opts.paths);
    const seed = opts.seed ?? 1;
    // A handful of popular pages (the realistic ones and ~1/128 of the rest) get most traffic.
    const popular = paths.map((_, i) => i < head.length || hash3(seed, i, -2) % 128 === 0);
    // ~1 page in 16 is orphaned: never visited, so it is absent from every answer.
    const base = paths.map((_, i) => {
      const r = hash3(seed, i, -3);
      if (popular[i]) return 40 + (r % 360);
      return r % 16 === 0 ? 0 : 1 + (r % 6);
    });
    this.site = { paths, seed, base, popular };
    this.cache = undefined;
  }

  /** Whole-range answer of the visitors model (all rows, service order); throws on bad dates. */
  truth(dateFrom?: string, dateTo?: string): VisitorsTruth {
    const range = this.resolveRange(dateFrom, dateTo);
    if ('error' in range) throw new Error(range.error);
    return this.computeVisitors(range.fromDay, range.toDay);
  }

  // ---- HTTP ----

  private async receive(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const raw = Buffer.concat(chunks).toString('utf8');
    const url = new URL(req.url ?? '/', this.url);
    const route = this.route(req.method ?? '', url.pathname);
    let body: unknown = raw === '' ? undefined : raw;
    try {
      body = raw === '' ? undefined : JSON.parse(raw);
    } catch {} // keep the raw text: the handler answers 400
    const fault = route
      ? this.takeFault(route.kind, Object.fromEntries(url.searchParams))
      : undefined;
    const rec: RecordedRequest = {
      method: req.method ?? '',
      path: url.pathname,
      query: Object.fromEntries(url.searchParams),
      authorization: req.headers.authorization,
      body,
      status: null,
      at: Date.now(), // wall clock even when `now` is pinned: tests measure retry spacing
      answeredAt: null,
      delayMs: 0,
      kind: route?.kind ?? null,
      fault,
    };
    this.requests.push(rec);
    for (const listener of this.arrivals) listener(rec);

    if (fault && 'refuse' in fault) return void req.socket.destroy();
    if (fault && 'status' in fault) {
      if ('tookEffect' in fault && fault.tookEffect) this.handle(route, req, url, body, fault);
      return this.send(res, rec, this.faultReply(route?.kind, fault));
    }
    let reply = this.handle(route, req, url, body, fault);
    if (fault && 'reset' in fault) return void req.socket.destroy();
    const ok = reply.status < 300;
    if (ok && fault && 'malformed' in fault) {
      reply = { ...reply, body: '<!DOCTYPE html><html><body>Please wait…</body></html>' };
    } else if (ok && fault && 'wrongShape' in fault) {
      reply = { ...reply, body: this.wrongShape(route?.kind, reply.body) };
    }
    const delayMs =
      fault && 'slowMs' in fault ? fault.slowMs : route ? this.latency.next(route.kind) : 0;
    rec.delayMs = delayMs;
    if (delayMs) {
      const t = setTimeout(() => {
        this.timers.delete(t);
        if (!res.destroyed) this.send(res, rec, reply);
      }, delayMs);
      this.timers.add(t);
      return;
    }
    this.send(res, rec, reply);
  }

  private send(res: ServerResponse, rec: RecordedRequest, reply: Reply): void {
    rec.status = reply.status;
    rec.answeredAt = Date.now();
    const text = typeof reply.body === 'string' ? reply.body : JSON.stringify(reply.body);
    const type = typeof reply.body === 'string' ? 'text/html' : 'application/json';
    res.writeHead(reply.status, { 'content-type': `${type}; charset=utf-8`, ...reply.headers });
    res.end(text);
  }

  private route(method: string, path: string): Route | undefined {
    const seg = path.split('/').slice(1).map(decodeURIComponent);
    const [v, area, projectId = '', job, jobId, tail] = seg;
    if (v === 'v1' && area === 'analytics' && seg.length === 4 && job === 'visitors') {
      return method === 'GET' ? { kind: 'visitors', projectId, jobId: undefined } : undefined;
    }
    const insight = v === 'v1' && area === 'analytics' ? insightsKind(seg.slice(3)) : undefined;
    if (insight)
      return method === 'GET' ? { kind: insight, projectId, jobId: undefined } : undefined;
    if (v === 'v1' && area === 'agent' && seg.length === 4 && job === 'jobs')
      return method === 'GET' ? { kind: 'jobs', projectId, jobId: undefined } : undefined;
    if (v !== 'v2' || area !== 'agent' || job !== 'job') return undefined;
    if (seg.length === 4 && method === 'POST') return { kind: 'create', projectId, jobId };
    if (seg.length === 5 && method === 'GET') return { kind: 'get', projectId, jobId };
    if (seg.length === 6 && tail === 'message' && method === 'POST') {
      return { kind: 'message', projectId, jobId };
    }
    return undefined;
  }

  private takeFault(kind: RequestKind, query: Record<string, string>): Fault | undefined {
    const i = this.faults.findIndex(
      (f) =>
        (f.kind === kind || f.kind === '*') &&
        (kind === 'visitors' || !('shiftOrder' in f.fault)) &&
        (f.when === undefined || f.when(query)),
    );
    const entry = this.faults[i];
    if (!entry) return undefined;
    if (--entry.left <= 0) this.faults.splice(i, 1);
    return entry.fault;
  }

  private faultReply(
    kind: RequestKind | undefined,
    fault: Extract<Fault, { status: number }>,
  ): Reply {
    if (fault.status === 429) {
      const headers: Record<string, string> =
        fault.retryAfterSec === undefined ? {} : { 'retry-after': String(fault.retryAfterSec) };
      return { status: 429, body: { error: 'Rate limit exceeded' }, headers };
    }
    if (fault.status === 400) {
      const analytics = kind === 'visitors' || isInsightsKind(kind);
      const error = analytics ? 'Invalid query parameters' : 'Invalid request';
      return { status: 400, body: { error, details: fault.details } };
    }
    const defaults: Record<number, unknown> = {
      401: { error: 'Unauthorized' },
      403: { error: 'Forbidden' },
      404: {
        error:
          kind === 'visitors' || isInsightsKind(kind)
            ? 'Not found'
            : kind === 'jobs'
              ? 'Project not found'
              : 'Job not found',
      },
      500: { error: 'Internal server error' },
      // Gateways answer 502/503 with their own HTML page, not the API's JSON.
      502: '<html><body><h1>502 Bad Gateway</h1></body></html>',
      503: '<html><body><h1>503 Service Temporarily Unavailable</h1></body></html>',
    };
    return { status: fault.status, body: fault.body ?? defaults[fault.status] };
  }

  private wrongShape(kind: RequestKind | undefined, body: unknown): unknown {
    if (isInsightsKind(kind)) return insightsWrongShape(kind);
    if (kind === 'visitors')
      return { totals: { human: '12', ai: null }, visitors: {}, hasMore: 'no' };
    if (kind === 'jobs') return { allSessions: 'none' };
    return { ...(body as object), status: 'exploded', source: 'github' };
  }

  /** Auth, then project, then read-only, then the route itself. */
  private handle(
    route: Route | undefined,
    req: IncomingMessage,
    url: URL,
    body: unknown,
    fault: Fault | undefined,
  ): Reply {
    if (!route) return { status: 404, body: { error: 'Not found' } };
    const key = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
    const ownKeys = [...this.projects.values()].filter((k) => k !== undefined);
    const known =
      key === this.opts.apiKey ||
      (key !== undefined && (this.opts.readOnlyKeys.includes(key) || ownKeys.includes(key)));
    if (!known) return { status: 401, body: { error: 'Unauthorized' } };
    if (route.projectId !== this.opts.projectId && !this.projects.has(route.projectId))
      return { status: 404, body: { error: 'Project not found' } };
    const projectKey = ownKeys.includes(key ?? '');
    if (projectKey && this.projects.get(route.projectId) !== key)
      return { status: 403, body: { error: 'Forbidden: this API key is for another project' } };
    if (req.method === 'POST' && key !== this.opts.apiKey && !projectKey) {
      return { status: 403, body: { error: 'Forbidden: this API key is read-only' } };
    }
    if (isInsightsKind(route.kind)) return this.insights.answer(route.kind, url.searchParams);
    if (route.kind === 'visitors') {
      return this.visitors(url.searchParams, fault !== undefined && 'shiftOrder' in fault);
    }
    if (route.kind === 'jobs') return this.sessions(route.projectId, url.searchParams);

    const found = route.jobId === undefined ? undefined : this.jobs.get(route.jobId);
    const inProject =
      (this.jobProject.get(found?.id ?? '') ?? this.opts.projectId) === route.projectId;
    const job = inProject ? found : undefined;
    if (route.kind === 'get') return job ? { status: 200, body: this.wire(job) } : jobNotFound();

    const prompt = (body as { prompt?: unknown } | undefined)?.prompt;
    if (typeof body !== 'object' || body === null || Array.isArray(body)) {
      const message = typeof body === 'string' ? 'Malformed JSON body' : 'Expected a JSON object';
      return invalid([{ path: [], message }]);
    }
    if (typeof prompt !== 'string' || prompt.length === 0) {
      const message =
        typeof prompt === 'string' ? 'String must contain at least 1 character(s)' : 'Required';
      return invalid([{ path: ['prompt'], message }]);
    }
    if (route.kind === 'create') {
      const id = `job_${randomBytes(8).toString('hex')}`;
      const created = this.newJob(id, prompt);
      this.jobs.set(id, created);
      this.jobProject.set(id, route.projectId);
      this.created.push(created);
      return { status: 201, body: this.wire(created) };
    }
    if (!job) return jobNotFound();
    if (job.status === 'archived' || job.archivedAt !== null) {
      return invalid([{ path: ['id'], message: 'Job is archived and cannot receive messages' }]);
    }
    job.messages.push(prompt);
    job.status = 'active';
    return { status: 200, body: this.wire(job) };
  }

  private newJob(id: string, prompt: string): EmulatedJob {
    return {
      id,
      status: 'active',
      source: { repository: 'https://github.com/acme/docs', ref: 'main' },
      model: 'claude-sonnet-4',
      prLink: null,
      createdAt: new Date(this.now()).toISOString(),
      archivedAt: null,
      messages: [prompt],
    };
  }

  /** `GET /v1/agent/{projectId}/jobs`: the project's jobs as v1 sessions, newest first. */
  private sessions(projectId: string, q: URLSearchParams): Reply {
    const details: Detail[] = [];
    const int = intParams(q, details);
    const skip = int('skip', 0, 0, Number.MAX_SAFE_INTEGER);
    const take = int('take', 12, 1, 100);
    if (details.length > 0) return invalid(details);
    const mine = [...this.jobs.values()]
      .filter((j) => (this.jobProject.get(j.id) ?? this.opts.projectId) === projectId)
      .reverse();
    const allSessions = mine.slice(skip, skip + take).map((j) => ({
      sessionId: j.id,
      haulted: j.status !== 'active',
      haultReason:
        j.status === 'active' ? 'processing' : j.status === 'completed' ? 'completed' : 'error',
      ...(j.prLink ? { pullRequestLink: j.prLink } : {}),
      createdAt: j.createdAt,
    }));
    return { status: 200, body: { allSessions } };
  }

  /** The job's JSON as sent: no `messages`, minus omitted fields. */
  private wire(job: EmulatedJob): Record<string, unknown> {
    const { messages: _, ...rest } = job;
    const out: Record<string, unknown> = { ...rest, source: { ...rest.source } };
    for (const f of this.omitted.get(job.id) ?? []) {
      const [top, sub] = f.split('.') as [string, string | undefined];
      if (sub) delete (out[top] as Record<string, unknown> | undefined)?.[sub];
      else delete out[top];
    }
    return out;
  }

  // ---- analytics ----

  private visitors(q: URLSearchParams, shiftOrder: boolean): Reply {
    const details: Detail[] = [];
    const int = intParams(q, details);
    const limit = int('limit', 50, 1, 250);
    const offset = int('offset', 0, 0, Infinity);
    const range = this.resolveRange(q.get('dateFrom') ?? undefined, q.get('dateTo') ?? undefined);
    if ('error' in range) details.push({ path: [range.param], message: range.error });
    if (details.length > 0 || 'error' in range) {
      return { status: 400, body: { error: 'Invalid query parameters', details } };
    }
    const { totals, rows } = this.computeVisitors(range.fromDay, range.toDay);
    const ordered = shiftOrder ? [...rows.slice(-1), ...rows.slice(0, -1)] : rows;
    return {
      status: 200,
      body: {
        totals,
        visitors: ordered.slice(offset, offset + limit),
        hasMore: offset + limit < rows.length,
      },
    };
  }

  /** Day numbers [fromDay, toDay) for the query, with the defaults described in the header. */
  private resolveRange(
    dateFrom: string | undefined,
    dateTo: string | undefined,
  ): { fromDay: number; toDay: number } | { error: string; param: string } {
    const to =
      dateTo === undefined ? (Math.floor(this.now() / DAY_MS) + 1) * DAY_MS : parseDate(dateTo);
    if (to === null)
      return { param: 'dateTo', error: 'dateTo must be a date (YYYY-MM-DD or ISO 8601)' };
    const from = dateFrom === undefined ? to - DEFAULT_RANGE_DAYS * DAY_MS : parseDate(dateFrom);
    if (from === null)
      return { param: 'dateFrom', error: 'dateFrom must be a date (YYYY-MM-DD or ISO 8601)' };
    if (from >= to) return { param: 'dateFrom', error: 'dateFrom must be before dateTo' };
    return { fromDay: Math.floor(from / DAY_MS), toDay: Math.ceil(to / DAY_MS) };
  }

  private computeVisitors(fromDay: number, toDay: number): VisitorsTruth {
    const { paths, seed, base, popular } = this.site;
    // Traffic exists from launch until today; a future or pre-launch day is all zero.
    const lastDay = Math.min(toDay, Math.floor(this.now() / DAY_MS) + 1);
    const key = `${fromDay}:${lastDay}`;
    if (this.cache?.key === key) return this.cache.value;
    const n = paths.length;
    const [h, a, ov] = [new Float64Array(n), new Float64Array(n), new Float64Array(n)];
    for (let day = Math.max(fromDay, SITE_LAUNCH_DAY); day < lastDay; day++) {
      if (hash3(seed, -1, day) % 20 === 0) continue; // tracking outage: whole site zero
      for (let i = 0; i < n; i++) {
        const r = hash3(seed, i, day);
        if ((r & 0xff) < (popular[i] ? 5 : 200)) continue; // no traffic on this page today
        const human = Math.floor(base[i]! * (0.3 + ((r >>> 8) & 0xff) / 255));
        const ai = Math.floor(base[i]! * 0.4 * (((r >>> 16) & 0xff) / 255));
        h[i]! += human;
        a[i]! += ai;
        ov[i]! += Math.floor(Math.min(human, ai) * (((r >>> 24) & 0x3f) / 100)); // same person, both
      }
    }
    const order = paths.map((_, i) => i).sort((x, y) => hash3(seed, x, -4) - hash3(seed, y, -4));
    const rows: VisitorRow[] = [];
    let [sumH, sumA, sumOv] = [0, 0, 0];
    for (const i of order) {
      const [human, ai, overlap] = [h[i]!, a[i]!, ov[i]!];
      [sumH, sumA, sumOv] = [sumH + human, sumA + ai, sumOv + overlap];
      if (human + ai > 0) rows.push({ path: paths[i]!, human, ai, total: human + ai - overlap });
    }
    const human = Math.floor(sumH * HUMAN_SITE_FRACTION);
    const ai = Math.floor(sumA * AI_SITE_FRACTION);
    // overlap <= min(page sums) so this stays within [max(human, ai), human + ai].
    const total = human + ai - Math.floor(sumOv * Math.min(HUMAN_SITE_FRACTION, AI_SITE_FRACTION));
    const value = { totals: { human, ai, total }, rows };
    this.cache = { key, value };
    return value;
  }
}

function insightsKind(tail: string[]): InsightsKind | undefined {
  const path = tail.join('/');
  if (path === 'feedback/by-page') return 'feedbackByPage';
  return path === 'searches' || path === 'assistant' || path === 'feedback' ? path : undefined;
}

function jobNotFound(): Reply {
  return { status: 404, body: { error: 'Job not found' } };
}

type Detail = { path: (string | number)[]; message: string };

/**
 * Reads whole-number query parameters as the service validates them: a missing one takes its
 * default, a bad one is listed in `details` (answered 400 together) and takes its default.
 */
function intParams(q: URLSearchParams, details: Detail[]) {
  return (name: string, def: number, min: number, max: number): number => {
    const s = q.get(name);
    if (s === null) return def;
    const n = /^\d+$/.test(s) ? Number(s) : Number.NaN;
    if (n >= min && n <= max) return n;
    const bound = max === Infinity ? `>= ${min}` : `between ${min} and ${max}`;
    details.push({ path: [name], message: `${name} must be an integer ${bound}` });
    return def;
  };
}

function invalid(details: Detail[]): Reply {
  return { status: 400, body: { error: 'Invalid request', details } };
}
