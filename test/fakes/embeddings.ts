import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

/**
 * A fake of an OpenAI-compatible embeddings endpoint (`POST /v1/embeddings`, `{model, input}`
 * → `{object: 'list', data: [{object, index, embedding}], model, usage}`; errors as
 * `{error: {message, type, param, code}}`), on 127.0.0.1. Its vectors are deterministic and
 * mean something: each word of a CONCEPT adds that concept's direction (a unit vector seeded
 * by the concept's name), any other word a small direction of its own (seeded by the word), so
 * paraphrases that share no word ("is the api down" and "where is the status page") are close,
 * and "rotate api key" and "delete api key" only half so. Faults, for the next n requests:
 * a status (429 with Retry-After, 500, 401…), a hang (no answer until closed), a body that is
 * not JSON, a vector with one dimension too few. With `key`, a request without
 * `Authorization: Bearer <key>` is 401, as OpenAI answers it.
 */

export const CONCEPTS: Record<string, readonly string[]> = {
  outage: ['down', 'outage', 'status', 'incident', 'unavailable', 'offline', 'uptime'],
  sales: ['sales', 'demo', 'salesperson', 'enterprise', 'quote'],
  refund: ['refund', 'charged', 'twice', 'reimburse', 'chargeback', 'money'],
  rotate: ['rotate', 'rotation', 'rotating', 'regenerate', 'roll'],
  delete: ['delete', 'remove', 'revoke', 'deleting', 'erase'],
  key: ['key', 'keys', 'token', 'credential', 'credentials'],
};
/** Words that carry nothing (left out of every vector). */
const STOP = new Set(
  'a an the is are am i my me we our to of for in on at it do does how can where what why when there any this that with be get see right now please'.split(
    ' ',
  ),
);
/** A word outside every concept counts this much of a concept word. */
const OTHER_WORD = 0.3;

export type EmbeddingsFault =
  | { kind: 'status'; status: number; retryAfter?: string }
  | { kind: 'hang' }
  | { kind: 'malformed' }
  | { kind: 'wrong-dimension' };

export interface EmbeddingsRequest {
  model: unknown;
  texts: string[];
  authorization: string | undefined;
  /** What was answered: a status, or 'hang'. */
  answered: number | 'hang';
}

export class FakeEmbeddings {
  readonly requests: EmbeddingsRequest[] = [];
  readonly dims: number;
  #faults: { fault: EmbeddingsFault; left: number }[] = [];
  readonly #server: Server;
  readonly #key: string | undefined;
  readonly #sockets = new Set<Socket>();

  private constructor(server: Server, o: { dims: number; key: string | undefined }) {
    this.#server = server;
    this.dims = o.dims;
    this.#key = o.key;
  }

  static async start(o: { dims?: number; key?: string } = {}): Promise<FakeEmbeddings> {
    let fake: FakeEmbeddings | undefined;
    const server = createServer((req, res) => fake!.handle(req, res));
    fake = new FakeEmbeddings(server, { dims: o.dims ?? 64, key: o.key });
    server.on('connection', (s) => {
      fake.#sockets.add(s);
      s.once('close', () => fake.#sockets.delete(s));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return fake;
  }

  /** The base URL, as INSIGHTS_EMBEDDINGS_URL takes it (the client adds `/embeddings`). */
  get url(): string {
    return `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}/v1`;
  }

  /** The next `times` requests get `fault` (after any injected before). */
  inject(fault: EmbeddingsFault, times = 1): void {
    this.#faults.push({ fault, left: times });
  }

  /** Texts received, over every request. */
  get textsReceived(): string[] {
    return this.requests.flatMap((r) => r.texts);
  }

  async close(): Promise<void> {
    for (const s of this.#sockets) s.destroy();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }

  /** The vector the fake gives `text` (unit length). */
  vectorOf(text: string): number[] {
    const v = new Array<number>(this.dims).fill(0);
    const words = text
      .toLowerCase()
      .normalize('NFD')
      .replace(/\p{Diacritic}/gu, '')
      .match(/[a-z0-9]+/g);
    for (const w of words ?? []) {
      if (STOP.has(w)) continue;
      const concept = Object.keys(CONCEPTS).find((c) => CONCEPTS[c]!.includes(w));
      const d = direction(concept ? `concept:${concept}` : `word:${w}`, this.dims);
      const weight = concept ? 1 : OTHER_WORD;
      for (let k = 0; k < this.dims; k++) v[k]! += weight * d[k]!;
    }
    const norm = Math.hypot(...v) || 1;
    return v.map((x) => x / norm);
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => this.answer(req, res, Buffer.concat(chunks).toString('utf8')));
  }

  private answer(req: IncomingMessage, res: ServerResponse, raw: string): undefined {
    let body: { model?: unknown; input?: unknown } = {};
    try {
      body = JSON.parse(raw) as typeof body;
    } catch {}
    const texts = Array.isArray(body.input) ? body.input.map(String) : [];
    const record: EmbeddingsRequest = {
      model: body.model,
      texts,
      authorization: req.headers.authorization,
      answered: 200,
    };
    this.requests.push(record);
    const send = (status: number, payload: unknown, headers: Record<string, string> = {}) => {
      record.answered = status;
      res.writeHead(status, { 'content-type': 'application/json', ...headers });
      res.end(typeof payload === 'string' ? payload : JSON.stringify(payload));
      return undefined;
    };
    if (req.method !== 'POST' || req.url !== '/v1/embeddings')
      return send(
        404,
        openAiError(`Unknown request URL: ${req.method} ${req.url}`, 'invalid_request_error'),
      );
    if (this.#key !== undefined && req.headers.authorization !== `Bearer ${this.#key}`)
      return send(401, openAiError('Incorrect API key provided.', 'invalid_request_error'));
    const fault = this.takeFault();
    if (fault?.kind === 'hang') {
      record.answered = 'hang';
      return;
    }
    if (fault?.kind === 'status')
      return send(
        fault.status,
        openAiError(
          `fault ${fault.status}`,
          fault.status === 429 ? 'rate_limit_exceeded' : 'server_error',
        ),
        fault.retryAfter === undefined ? {} : { 'retry-after': fault.retryAfter },
      );
    if (fault?.kind === 'malformed') return send(200, '{"object":"list","data":[{"embedd');
    if (texts.length === 0 || !Array.isArray(body.input))
      return send(400, openAiError("'input' must be a non-empty array", 'invalid_request_error'));
    const data = texts.map((t, index) => ({
      object: 'embedding',
      index,
      embedding: this.vectorOf(t).slice(
        0,
        fault?.kind === 'wrong-dimension' && index === 0 ? -1 : undefined,
      ),
    }));
    send(200, {
      object: 'list',
      // OpenAI does not promise the order of `data`: the fake answers it reversed.
      data: data.reverse(),
      model: body.model,
      usage: { prompt_tokens: texts.length * 4, total_tokens: texts.length * 4 },
    });
  }

  private takeFault(): EmbeddingsFault | undefined {
    const next = this.#faults[0];
    if (!next) return undefined;
    if (--next.left <= 0) this.#faults.shift();
    return next.fault;
  }
}

const openAiError = (message: string, type: string) => ({
  error: { message, type, param: null, code: null },
});

/** A unit vector seeded by `name` (FNV-1a, then mulberry32): the same in every run. */
function direction(name: string, dims: number): number[] {
  let h = 0x811c9dc5;
  for (let i = 0; i < name.length; i++) h = Math.imul(h ^ name.charCodeAt(i), 0x01000193);
  let s = h >>> 0;
  const next = () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = Math.imul(s ^ (s >>> 15), 1 | s);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296 - 0.5;
  };
  const v = Array.from({ length: dims }, next);
  const norm = Math.hypot(...v) || 1;
  return v.map((x) => x / norm);
}
