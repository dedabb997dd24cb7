/**
 * The control server's HTTP plumbing: JSON bodies in and out, and the checks on their fields.
 * A bad request is an HttpError, answered with its status and message, never a crash.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';

const MAX_BODY = 1_000_000;

export type Json = Record<string, unknown>;

/** A client error: answered with its status and message. */
export class HttpError extends Error {
  readonly status: number;
  constructor(status: number, message: string) {
    super(message);
    this.status = status;
  }
}

export async function readJson(req: IncomingMessage): Promise<Json> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY) throw new HttpError(400, `body larger than ${MAX_BODY} bytes`);
    chunks.push(chunk as Buffer);
  }
  const raw = Buffer.concat(chunks).toString('utf8').trim();
  if (raw === '') return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    throw new HttpError(400, 'body is not valid JSON');
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new HttpError(400, 'body must be a JSON object');
  }
  return parsed as Json;
}

/** A string field; without `fallback` it is required. */
export function field(
  body: Json,
  name: string,
  o: { fallback?: string; allowEmpty?: boolean } = {},
): string {
  const v = body[name];
  if (v === undefined || v === null) {
    if (o.fallback !== undefined) return o.fallback;
    throw new HttpError(400, `\`${name}\` is required`);
  }
  if (typeof v !== 'string') throw new HttpError(400, `\`${name}\` must be a string`);
  if (v === '' && !o.allowEmpty) throw new HttpError(400, `\`${name}\` must not be empty`);
  return v;
}

/** An optional string field: undefined when absent. */
export function optional(body: Json, name: string): string | undefined {
  return body[name] === undefined || body[name] === null ? undefined : field(body, name);
}

/** Slack ids are upper-case letters and digits; anything else would not resolve in the fake. */
export function slackId(body: Json, name: string, fallback: string): string {
  const v = field(body, name, { fallback });
  if (!/^[A-Z0-9]+$/.test(v)) throw new HttpError(400, `\`${name}\` must look like a Slack id`);
  return v;
}

/** A message ts as Slack writes it (`1700000000.000100`). */
export function messageTs(body: Json, name: string): string {
  const v = field(body, name);
  if (!/^\d+\.\d+$/.test(v)) throw new HttpError(400, `\`${name}\` must be a message ts`);
  return v;
}

export function send(res: ServerResponse, status: number, body: unknown): void {
  if (res.headersSent) return;
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8' });
  res.end(`${JSON.stringify(body, null, 2)}\n`);
}
