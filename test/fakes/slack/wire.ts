/**
 * What every part of the fake Slack shares: the workspace's ids, the JSON shape of an API
 * answer, and the wire format @slack/web-api speaks (form-encoded, JSON or multipart posts,
 * JSON-encoded fields, Bearer tokens).
 */
import type { ServerResponse } from 'node:http';

export const SLACK_IDS = {
  team: 'T0001',
  teamName: 'Acme',
  botUser: 'UBOT',
  botUserName: 'docsbot',
  botId: 'BBOT',
  appId: 'A0001',
} as const;

/**
 * The app as Slack knows it (Basic Information → App Credentials): what oauth.v2.access checks.
 * `redirectUrls`: the Redirect URLs set under OAuth & Permissions (none until a test sets one).
 */
export const SLACK_APP = {
  appId: SLACK_IDS.appId,
  clientId: '1111111111.2222222222',
  clientSecret: 'fakeclientsecret0123456789abcdef',
} as const;

export type Json = Record<string, unknown>;

/**
 * Who a call's token stands for: its workspace (for an org-wide install, its Enterprise Grid
 * org: `team` is then the org's id) and that install's bot user.
 */
export interface Caller {
  team: string;
  enterprise: string | undefined;
  orgWide: boolean;
  botUser: string;
  botId: string;
}

/** A bot token the fake did not issue stands for the default workspace, as it always has. */
export const DEFAULT_CALLER: Caller = {
  team: SLACK_IDS.team,
  enterprise: undefined,
  orgWide: false,
  botUser: SLACK_IDS.botUser,
  botId: SLACK_IDS.botId,
};

/** A Web API method: its arguments and who called, to Slack's JSON answer. */
export type Handler = (a: Json, caller: Caller) => Json;

/** One HTTP answer: a JSON object, or raw text for non-JSON answers. */
export type Answer = { status: number; body: unknown; headers?: Record<string, string> };

export const isObj = (v: unknown): v is Json =>
  typeof v === 'object' && v !== null && !Array.isArray(v);
export const str = (v: unknown): string | undefined =>
  typeof v === 'string' && v !== '' ? v : typeof v === 'number' ? String(v) : undefined;
export const truthy = (v: unknown): boolean => v === true || v === 'true' || v === '1' || v === 1;
export const fail = (error: string, extra: Json = {}): Json => ({ ok: false, error, ...extra });
// Form posts carry these as JSON strings (WebClient JSON.stringify-s every non-scalar argument).
const JSON_FIELDS = ['blocks', 'attachments', 'metadata', 'files', 'unfurls', 'view', 'chunks'];

export function send(res: ServerResponse, a: Answer): void {
  const isText = typeof a.body === 'string';
  res.writeHead(a.status, {
    'content-type': isText ? 'text/plain; charset=utf-8' : 'application/json; charset=utf-8',
    ...a.headers,
  });
  res.end(isText ? a.body : JSON.stringify(a.body));
}

/** A bot token: `xoxb-…`, or `xoxe.xoxb-…` when the app rotates its tokens. */
export const isBotToken = (token: string): boolean =>
  token.startsWith('xoxb-') || token.startsWith('xoxe.xoxb-');

export function authError(method: string, token: string | undefined): Json | undefined {
  if (!token) return fail('not_authed');
  const isApp = token.startsWith('xapp-');
  // App-level tokens open sockets and nothing else; bot tokens cannot open sockets.
  if (method === 'apps.connections.open')
    return isApp ? undefined : fail(isBotToken(token) ? 'not_allowed_token_type' : 'invalid_auth');
  if (isApp) return fail('not_allowed_token_type');
  return isBotToken(token) ? undefined : fail('invalid_auth');
}

export function parseArgs(contentType: string, body: Buffer, query: URLSearchParams): Json {
  const args: Json = Object.fromEntries(query);
  if (contentType.startsWith('application/json')) {
    Object.assign(args, body.length > 0 ? JSON.parse(body.toString()) : {});
  } else if (contentType.startsWith('multipart/form-data')) {
    for (const p of multipart(body, contentType)) {
      args[p.name] =
        p.filename !== undefined
          ? `<file ${p.filename}, ${p.data.length} bytes>`
          : p.data.toString();
    }
  } else {
    Object.assign(args, Object.fromEntries(new URLSearchParams(body.toString())));
  }
  for (const key of JSON_FIELDS) {
    const v = args[key];
    if (typeof v !== 'string' || !/^\s*[[{]/.test(v)) continue;
    try {
      args[key] = JSON.parse(v);
    } catch {
      // Left as a string: Slack then reports e.g. invalid_blocks_format.
    }
  }
  return args;
}

export function multipart(
  body: Buffer,
  contentType: string,
): { name: string; filename?: string; data: Buffer }[] {
  const boundary = /boundary="?([^";]+)"?/.exec(contentType)?.[1];
  if (!boundary) return [];
  const delim = Buffer.from(`--${boundary}`);
  const parts: { name: string; filename?: string; data: Buffer }[] = [];
  for (let pos = body.indexOf(delim); pos !== -1; ) {
    const start = pos + delim.length;
    const next = body.indexOf(delim, start);
    if (next === -1) break;
    const part = body.subarray(start + 2, next - 2); // drop the CRLFs around each part
    const headEnd = part.indexOf('\r\n\r\n');
    const head = part.subarray(0, headEnd).toString();
    parts.push({
      name: /;\s*name="([^"]*)"/.exec(head)?.[1] ?? '',
      filename: /;\s*filename="([^"]*)"/.exec(head)?.[1],
      data: part.subarray(headEnd + 4),
    });
    pos = next;
  }
  return parts;
}
