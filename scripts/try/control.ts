/**
 * The control API of `scripts/local-fakes.ts`: act as Slack users (slash commands, messages,
 * mentions, DMs, clicks, modals, the App Home) and as the agent service (jobs finishing,
 * faults), read what the fake Slack holds, and dump it for slack-view.
 */
import { randomBytes } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import type { IncomingMessage } from 'node:http';
import { join } from 'node:path';
import type { EmulatedJob, Fault, RequestKind } from '../../test/fakes/api-emulator.ts';
import { formEncode, slackEncode, slashCommand } from '../../test/helpers/slack-requests.ts';
import { type Ctx, effectsSince, lastSlackSeq, toBot } from './context.ts';
import { DEFAULT_CHANNEL, DEFAULT_USER } from './env.ts';
import { field, HttpError, type Json, readJson, slackId } from './http.ts';
import { answers, click, dm, home, mention, say, submit, views } from './surfaces.ts';

export const ENDPOINTS = [
  'POST /agent {text, channel?, user?}          run /agent as a user (status, project, doctor, help, or a prompt)',
  'POST /visitors {text, channel?, user?}       run /visitors as a user (e.g. text "7d")',
  'POST /insights {text, channel?, user?}       run /insights as a user (e.g. text "30d")',
  'POST /command {text: "/agent status", channel?, user?}  any slash command, typed as in Slack',
  'POST /mention {text, thread_ts?, channel?, user?}  "@bot <text>" (app_mention + message)',
  'POST /dm {text, thread_ts?, user?}            a DM to the bot (message.im, channel D<user>)',
  'POST /reply {thread_ts, text, channel?, user?} a user replies in a thread',
  'POST /say {text, thread_ts?, channel?, user?} a user writes a plain message (thread context)',
  'POST /click {ts, action_id, channel?, user?}  click a button on a bot message (job_view_pr, job_retry, job_follow_up, job_unwatch, …)',
  "POST /click {home: true, action_id, user?}    click a button on the user's App Home (docs_connect, docs_settings, …)",
  "POST /click {ts, option, channel?, user?}     pick from an insights gap's menu (⋯): draft:<id>, evidence:<id>, dismiss:<id>",
  "POST /submit {text, view_id?, user?}          submit a modal (default: the user's last), first input = text",
  'POST /submit {values: [..], view_id?, user?}  the same, its text inputs filled in order',
  'POST /home {user?}                            the user opens the App Home (app_home_opened)',
  'GET  /transcript?channel=C0001                what the bot posted, as plain text (every channel without ?channel)',
  'GET  /messages?channel=C0001                  channel history as the fake Slack holds it (JSON)',
  'GET  /views?user=U0001                        modals opened and App Homes published, as text',
  'GET  /answers?user=U0001                      what only the user saw (ephemerals, response_url answers)',
  'GET  /jobs                                    jobs in the API emulator',
  'POST /job/:id/complete {prLink?: string|null} the agent finishes (prLink defaults to null; id "latest": the newest job)',
  'POST /job/:id/fail | /archive | /forget       the agent fails / is archived / is forgotten (404)',
  'POST /fault {kind, fault, times?}             ApiEmulator.inject (kind: create|message|get|visitors|*)',
  'POST /site {paths, seed?}                     ApiEmulator.setSite (analytics paths)',
  'POST /dump                                    write <out>/calls.json for the slack-view renderer',
  "Every request is from the user's workspace (--workspaces 2: U0002 is in Globex, T0002, channel C0002)",
];
const COMMANDS = ['/agent', '/visitors', '/insights'];

/** What a person (or the agent service) does: POST /<name> with a JSON body. */
const ACTIONS: Record<string, (ctx: Ctx, body: Json) => Json | Promise<Json>> = {
  agent: (ctx, body) => command(ctx, '/agent', body),
  visitors: (ctx, body) => command(ctx, '/visitors', body),
  insights: (ctx, body) => command(ctx, '/insights', body),
  command: typedCommand,
  mention,
  dm,
  reply: (ctx, body) => say(ctx, body, true),
  say: (ctx, body) => say(ctx, body, false),
  click,
  submit,
  home,
  dump,
  fault,
  site,
};

/** Answers a control request; an HttpError carries the status of a bad one. */
export async function route(ctx: Ctx, req: IncomingMessage): Promise<unknown> {
  const url = new URL(req.url ?? '/', 'http://control');
  const method = req.method ?? 'GET';
  let parts: string[];
  try {
    parts = url.pathname.split('/').filter(Boolean).map(decodeURIComponent);
  } catch {
    throw new HttpError(400, `malformed path ${url.pathname}`);
  }
  const [name = '', ...rest] = parts;
  if (method === 'POST') {
    const body = await readJson(req);
    const action = Object.hasOwn(ACTIONS, name) && rest.length === 0 ? ACTIONS[name] : undefined;
    if (action) return action(ctx, body);
    const answer = name === 'job' && rest.length === 2 ? jobAction(ctx, rest, body) : undefined;
    if (answer) return answer;
  } else if (method === 'GET' && rest.length === 0) {
    const answer = read(ctx, name, url.searchParams);
    if (answer) return answer;
  }
  throw new HttpError(404, `no endpoint ${method} ${url.pathname} (GET / lists them)`);
}

/** GET /<name>: what the fakes hold; undefined for no such endpoint. */
function read(ctx: Ctx, name: string, query: URLSearchParams): Json | undefined {
  const { slack, api } = ctx;
  const user = query.get('user');
  switch (name) {
    case '':
      return { endpoints: ENDPOINTS, eventsUrl: ctx.eventsUrl, slack: slack.url, api: api.url };
    case 'messages': {
      const channel = query.get('channel') || DEFAULT_CHANNEL;
      return { channel, messages: slack.history(channel) };
    }
    case 'views':
      return views(ctx, user);
    case 'answers':
      return answers(ctx, user);
    case 'jobs': {
      const jobs = new Map(api.createdJobs().map((j) => [j.id, j]));
      for (const j of api.jobs.values()) jobs.set(j.id, j);
      return { jobs: [...jobs.values()].map((j) => publicJob(ctx, j)) };
    }
  }
  return undefined;
}

/** A slash command as Slack posts it, with a response_url the fake accepts; the ack and after. */
async function command(ctx: Ctx, name: string, body: Json): Promise<Json> {
  const text = field(body, 'text', { allowEmpty: true });
  const channel = slackId(body, 'channel', DEFAULT_CHANNEL);
  const user = slackId(body, 'user', DEFAULT_USER);
  // The renderer reads the channel from a response_url id of the form `C…-…`.
  const id = `${channel}-${randomBytes(6).toString('hex')}`;
  const responseUrl = ctx.slack.responseUrl(id);
  ctx.responseUrls.set(id, { channel, user, command: name });
  const fields = slashCommand({
    command: name,
    text: slackEncode(text), // as Slack sends typed text
    response_url: responseUrl,
    channel_id: channel,
    user_id: user,
    team_id: ctx.slack.workspaceOf(user).team,
  });
  const since = lastSlackSeq(ctx);
  const res = await toBot(ctx, formEncode(fields));
  const at = Date.now();
  const ack = { status: res.status, body: res.text, at, slackSeq: lastSlackSeq(ctx) };
  ctx.acks.push({ command: name, text, channel, user, ...ack });
  return {
    status: res.status,
    ack: res.json ?? res.text,
    responseUrl,
    ...(await effectsSince(ctx, since)),
  };
}

/** `{"text": "/agent status"}`: the command is the first word, as typed in Slack. */
function typedCommand(ctx: Ctx, body: Json): Promise<Json> {
  const typed = field(body, 'text').trimStart();
  const name = typed.split(/\s/, 1)[0] ?? '';
  if (!COMMANDS.includes(name)) {
    throw new HttpError(400, `\`text\` must start with one of ${COMMANDS.join(', ')}`);
  }
  return command(ctx, name, { ...body, text: typed.slice(name.length).trim() });
}

async function dump(ctx: Ctx): Promise<Json> {
  const file = join(ctx.out, 'calls.json');
  await ctx.slack.dump(file);
  // Add what FakeSlack does not know: the acks, and where each response_url belongs.
  const data = JSON.parse(await readFile(file, 'utf8')) as { responses?: Json[] };
  data.responses = (data.responses ?? []).map((r) => ({
    ...r,
    ...ctx.responseUrls.get(String(r.id)),
  }));
  await writeFile(file, JSON.stringify({ ...data, acks: ctx.acks }, null, 2));
  return { path: file, calls: ctx.slack.calls.length, responses: ctx.slack.responses.length };
}

function fault(ctx: Ctx, body: Json): Json {
  const kinds = ['create', 'message', 'get', 'visitors', '*'];
  const kind = field(body, 'kind');
  if (!kinds.includes(kind)) throw new HttpError(400, `\`kind\` must be one of ${kinds}`);
  const f = body.fault;
  if (typeof f !== 'object' || f === null || Array.isArray(f)) {
    throw new HttpError(400, '`fault` must be an object, e.g. {"status":503}');
  }
  const times = body.times ?? 1;
  if (!Number.isInteger(times) || (times as number) < 1) {
    throw new HttpError(400, '`times` must be a positive integer');
  }
  try {
    ctx.api.inject(kind as RequestKind | '*', f as Fault, times as number);
  } catch (err) {
    throw new HttpError(400, err instanceof Error ? err.message : String(err));
  }
  return { ok: true, kind, fault: f, times };
}

function site(ctx: Ctx, body: Json): Json {
  const { paths, seed } = body;
  if (!Number.isInteger(paths) || (paths as number) < 0 || (paths as number) > 100_000) {
    throw new HttpError(400, '`paths` must be an integer between 0 and 100000');
  }
  if (seed !== undefined && !Number.isInteger(seed)) {
    throw new HttpError(400, '`seed` must be an integer');
  }
  ctx.api.setSite({
    paths: paths as number,
    ...(seed === undefined ? {} : { seed: seed as number }),
  });
  return { ok: true, paths, seed: seed ?? 1 };
}

/**
 * POST /job/:id/<action>: the agent service moves a job on; undefined for no such action.
 * The id `latest` names the newest job, so a first try needs no id copied from `GET /jobs`.
 */
function jobAction(ctx: Ctx, [given = '', action]: string[], body: Json): Json | undefined {
  const { api } = ctx;
  const id = given === 'latest' ? ([...api.jobs.keys()].at(-1) ?? given) : given;
  const job = (): EmulatedJob => {
    const j = api.jobs.get(id);
    if (!j) throw new HttpError(404, `no job ${id} in the emulator (see GET /jobs)`);
    return j;
  };
  switch (action) {
    case 'complete': {
      const prLink = body.prLink ?? null;
      if (prLink !== null && (typeof prLink !== 'string' || prLink === '')) {
        throw new HttpError(400, '`prLink` must be a URL string or null');
      }
      job();
      return publicJob(ctx, api.complete(id, prLink));
    }
    case 'fail':
      job();
      return publicJob(ctx, api.fail(id));
    case 'archive':
      job();
      return publicJob(ctx, api.archive(id));
    case 'forget':
      api.forget(job().id);
      return { ok: true, id, forgotten: true };
  }
  return undefined;
}

function publicJob(ctx: Ctx, j: EmulatedJob): Json {
  return { ...j, known: ctx.api.jobs.has(j.id) };
}
