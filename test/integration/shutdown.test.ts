import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { Agent, get } from 'node:http';
import { connect, createServer, type Socket } from 'node:net';
import { Writable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { startBot } from '../../src/app/bot.ts';
import { loadConfig } from '../../src/config/config.ts';
import { openStore } from '../../src/store/open.ts';
import { CHANNEL, Harness, type HarnessOptions } from '../helpers/harness.ts';
import { logEvents } from '../helpers/log.ts';
import { eventually, sleep } from '../helpers/net.ts';
import { postgresAvailable } from '../helpers/postgres.ts';
import { answers, spawnBot as spawn } from '../helpers/process.ts';

let h: Harness;
async function harness(opts: HarnessOptions = {}): Promise<Harness> {
  h = await Harness.create(opts);
  return h;
}
/** Bots started by a test: one a failed assertion left running is killed after it. */
const children: ChildProcess[] = [];
const spawnBot = (env: Record<string, string>) => {
  const bot = spawn(env);
  children.push(bot.child);
  return bot;
};
afterEach(async (ctx) => {
  if (ctx.task.result?.state === 'fail') console.error(h.logs.split('\n').slice(-40).join('\n'));
  for (const c of children.splice(0))
    if (c.exitCode === null && c.signalCode === null) {
      const exited = once(c, 'exit');
      c.kill('SIGKILL');
      await exited;
    }
  await h.close();
});

async function getJson(path: string) {
  const res = await fetch(h.url(path));
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

async function threadOf(rootTs: string) {
  const store = await h.openStore();
  try {
    return await store.findThread('T0001', CHANNEL, rootTs);
  } finally {
    await store.close();
  }
}

describe('readiness', () => {
  it('is ready once up, every check ok, and alive on /healthz', async () => {
    await (await harness()).start();
    expect(await getJson('/readyz')).toEqual({
      status: 200,
      body: {
        status: 'ready',
        mode: 'http',
        failed: [],
        checks: { database: 'ok', slack: 'ok', accepting: 'ok', loops: 'ok' },
      },
    });
    expect(await getJson('/healthz')).toEqual({
      status: 200,
      body: { status: 'ok', mode: 'http' },
    });
  });

  it('is not ready once the database is gone, and says so, while /healthz stays 200', async () => {
    await (await harness()).start();
    await h.botStore?.close();
    const ready = await getJson('/readyz');
    expect(ready.status).toBe(503);
    expect(ready.body).toMatchObject({
      status: 'not_ready',
      failed: ['database'],
      checks: { database: 'unreachable', slack: 'ok', accepting: 'ok' },
    });
    expect((await getJson('/healthz')).status).toBe(200);
    expect(logEvents(h.logs, 'bot.not_ready')).toHaveLength(1);
  });
});

describe('graceful shutdown', () => {
  it('stops taking work at once, and finishes the /agent already in flight before closing', async () => {
    await (await harness()).start();
    h.api.inject('create', { slowMs: 1_500 });
    await h.command('Add a quickstart');
    const root = await eventually(() => h.roots()[0], 'root');
    await eventually(() => h.api.requestsTo('create').length === 1, 'the create in flight');

    const stopping = h.bot!.stop();
    const ready = await getJson('/readyz');
    expect(ready.status).toBe(503);
    expect(ready.body).toMatchObject({
      failed: ['accepting'],
      checks: { accepting: 'shutting_down' },
    });
    expect((await getJson('/healthz')).status).toBe(200);
    // A command arriving now is refused before anything is read: Slack retries elsewhere.
    const late = await h.command('Another one');
    expect(late.status).toBe(503);
    await stopping;

    expect(h.roots()).toHaveLength(1);
    expect(h.api.requestsTo('create')).toHaveLength(1);
    expect(h.api.requestsTo('create')[0]?.status).toBe(201);
    const job = h.api.createdJobs()[0]!;
    expect(await threadOf(root.ts)).toMatchObject({ jobId: job.id, status: 'active' });
    expect(logEvents(h.logs, 'bot.drain')).toMatchObject([{ pending: 1, left: 0 }]);
    expect(logEvents(h.logs, 'bot.drain_timeout')).toHaveLength(0);
  });

  it('disconnects Socket Mode first, and is not ready from then on', async () => {
    await (await harness({ mode: 'socket' })).start();
    expect((await getJson('/readyz')).status).toBe(200);
    h.api.inject('create', { slowMs: 1_000 }); // keeps the drain, and the server, going
    await h.command('Add a quickstart');
    await eventually(() => h.api.requestsTo('create').length === 1, 'the create in flight');

    const stopping = h.bot!.stop();
    const ready = await eventually(async () => {
      const r = await getJson('/readyz');
      return r.body.checks && (r.body.checks as { slack: string }).slack !== 'ok' && r;
    }, 'the socket to go');
    expect(ready).toMatchObject({
      status: 503,
      body: { checks: { slack: 'disconnected', accepting: 'shutting_down' } },
    });
    await stopping;
    expect(h.api.requestsTo('create')[0]?.status).toBe(201);
  });

  it('does not wait out a Retry-After that paused the polling', async () => {
    await (await harness()).start({ apiRetry: { maxRetryAfterMs: 60_000 } });
    await h.command('Add a quickstart');
    await eventually(() => h.api.createdJobs()[0], 'job');
    h.api.inject('get', { status: 429, retryAfterSec: 30 });
    await eventually(
      () => h.logLines().some((l) => l.msg === 'poll.rate_limited'),
      'polling paused for the Retry-After',
    );
    const polls = h.api.requestsTo('get').length;

    const started = performance.now();
    await h.stopBot();
    // Far below the 30 s the service asked for; nothing was sent again, not even by the
    // client (a poll makes one attempt: the pause is the wait).
    expect(performance.now() - started).toBeLessThan(5_000);
    expect(h.api.requestsTo('get')).toHaveLength(polls);
    expect(h.logs).not.toMatch(/"operation":"job.get"[^\n]*"willRetry":true/);
    expect(h.logs).not.toContain('poll.crashed');
  });

  it('cuts a create that waits out Retry-After short once the drain times out, and says it was not sent', async () => {
    await (await harness({ env: { SHUTDOWN_TIMEOUT_MS: '300' } })).start({
      apiRetry: { maxRetryAfterMs: 60_000 },
    });
    h.api.inject('create', { status: 429, retryAfterSec: 30 });
    await h.command('Add a quickstart');
    const root = await eventually(() => h.roots()[0], 'root');
    await eventually(
      () => h.api.requestsTo('create')[0]?.status === 429,
      'the rate-limited create',
    );

    const started = performance.now();
    await h.stopBot();
    expect(performance.now() - started).toBeLessThan(5_000);
    expect(logEvents(h.logs, 'bot.drain_timeout')).toMatchObject([{ left: 1, timeoutMs: 225 }]);
    expect(h.api.requestsTo('create')).toHaveLength(1);
    const thread = await threadOf(root.ts);
    expect(thread).toMatchObject({ status: 'start_failed', jobId: null });
    expect(thread?.error).toContain('shutting down, so the request was not sent');
  });
});

describe('graceful shutdown of the process', () => {
  it('on SIGTERM finishes a slow /agent create, records the job, and exits 0', async () => {
    await harness();
    const bot = spawnBot(h.env);
    await answers(h.url('/readyz'));
    h.api.inject('create', { slowMs: 1_500 });
    await h.command('Add a quickstart');
    const root = await eventually(() => h.roots()[0], 'root');
    await eventually(() => h.api.requestsTo('create').length === 1, 'the create in flight');

    bot.child.kill('SIGTERM');
    expect(await bot.exited).toBe(0);
    expect(h.api.requestsTo('create')[0]?.status).toBe(201);
    const job = h.api.createdJobs()[0]!;
    expect(await threadOf(root.ts)).toMatchObject({ jobId: job.id, status: 'active' });
    expect(logEvents(bot.output(), 'bot.drain')).toMatchObject([{ pending: 1, left: 0 }]);
    expect(bot.output()).toContain('bot.stopped');
  });

  it('waits no longer than SHUTDOWN_TIMEOUT_MS for a handler, exits 0, and the thread says what may have happened', async () => {
    await harness({ env: { SHUTDOWN_TIMEOUT_MS: '1000' } });
    const bot = spawnBot(h.env);
    await answers(h.url('/readyz'));
    // Far longer than the bound and than the client's own 15 s timeout.
    h.api.inject('create', { slowMs: 60_000 });
    await h.command('Add a quickstart');
    const root = await eventually(() => h.roots()[0], 'root');
    await eventually(() => h.api.requestsTo('create').length === 1, 'the create in flight');
    await sleep(100);

    const started = performance.now();
    bot.child.kill('SIGTERM');
    expect(await bot.exited).toBe(0);
    expect(performance.now() - started).toBeLessThan(1_000 + 4_000);
    // The drain has three quarters of the deadline; the rest stop in the last quarter.
    expect(logEvents(bot.output(), 'bot.drain_timeout')).toMatchObject([
      { left: 1, timeoutMs: 750 },
    ]);
    expect(logEvents(bot.output(), 'bot.shutdown_deadline')).toHaveLength(0);
    const thread = await threadOf(root.ts);
    expect(thread).toMatchObject({ status: 'start_failed' });
    expect(thread?.error).toContain('It may have started anyway');
  });
});

/** A GET over `agent` (keep-alive): the status and the Connection header it was answered with. */
function probe(url: string, agent: Agent): Promise<{ status: number; connection: string }> {
  return new Promise((resolve, reject) => {
    get(url, { agent }, (res) => {
      res.resume();
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, connection: String(res.headers.connection) }),
      );
    }).on('error', reject);
  });
}

/**
 * A TCP relay to `port` that can stop forwarding bytes without closing anything: what a
 * failover or a partition looks like from the bot (no error, no answer).
 */
async function blackholeRelay(port: number) {
  let holed = false;
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    const upstream = connect(port, '127.0.0.1');
    for (const [from, to] of [
      [client, upstream],
      [upstream, client],
    ] as const) {
      sockets.add(from);
      from.on('data', (chunk) => {
        if (!holed) to.write(chunk);
      });
      from.on('error', () => {});
      from.on('close', () => to.destroy());
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as { port: number }).port,
    blackhole: () => {
      holed = true;
    },
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

describe('a shutdown that always ends', () => {
  it.each(['http', 'socket'] as const)(
    'on SIGTERM tells a keep-alive client probing /readyz to close, and exits 0 without waiting for it (%s)',
    async (mode) => {
      await harness({ mode, env: { SHUTDOWN_TIMEOUT_MS: '8000' } });
      const bot = spawnBot(h.env);
      await answers(h.url('/readyz'));
      const agent = new Agent({ keepAlive: true, maxSockets: 1 });
      const seen: { status: number; connection: string }[] = [];
      let probing = true;
      const probing$ = (async () => {
        while (probing) {
          await probe(h.url('/readyz'), agent).then(
            (r) => seen.push(r),
            () => {}, // refused once the server is gone
          );
          await sleep(10);
        }
      })();
      await eventually(() => seen.length >= 3, 'a few probes on one connection');
      expect(seen[0]).toEqual({ status: 200, connection: 'keep-alive' });
      // A create in flight keeps the drain, and the probes during it, going for a while.
      h.api.inject('create', { slowMs: 1_500 });
      await h.command('Add a quickstart');
      await eventually(() => h.api.requestsTo('create').length === 1, 'the create in flight');

      bot.child.kill('SIGTERM');
      const code = await bot.exited;
      probing = false;
      await probing$;
      agent.destroy();
      expect(code).toBe(0);
      expect(logEvents(bot.output(), 'bot.shutdown_deadline')).toHaveLength(0);
      expect(seen).toContainEqual({ status: 503, connection: 'close' });
      expect(bot.output()).toContain('bot.stopped');
    },
  );

  it('cuts a connection that never finishes its request once the grace is over', async () => {
    await harness({ env: { SHUTDOWN_TIMEOUT_MS: '8000' } });
    const bot = spawnBot(h.env);
    await answers(h.url('/readyz'));
    const socket = connect(Number(h.env.PORT), '127.0.0.1');
    await new Promise((resolve) => socket.once('connect', resolve));
    socket.write('GET /readyz HTTP/1.1\r\nHost: bot\r\n'); // and never the blank line
    const cut = new Promise((resolve) => socket.once('close', resolve));
    await sleep(100);

    bot.child.kill('SIGTERM');
    expect(await bot.exited).toBe(0);
    await cut;
    expect(logEvents(bot.output(), 'bot.shutdown_deadline')).toHaveLength(0);
  });

  it.skipIf(!postgresAvailable)(
    'on SIGTERM with a database that stopped answering, exits 1 at SHUTDOWN_TIMEOUT_MS and says what it left',
    async () => {
      await harness({ engine: 'postgres', env: { SHUTDOWN_TIMEOUT_MS: '2000' } });
      const url = new URL(h.env.DATABASE_URL ?? '');
      const relay = await blackholeRelay(Number(url.port || 5432));
      try {
        url.port = String(relay.port);
        const bot = spawnBot({ ...h.env, DATABASE_URL: url.toString() });
        await answers(h.url('/readyz'));
        relay.blackhole();
        await sleep(300); // the loops' next queries are sent into the hole
        const started = performance.now();
        bot.child.kill('SIGTERM');
        expect(await bot.exited).toBe(1);
        expect(performance.now() - started).toBeLessThan(2_000 + 3_000);
        const [line] = logEvents(bot.output(), 'bot.shutdown_deadline');
        expect(line).toMatchObject({ timeoutMs: 2_000, inflight: 0, queued: 0 });
        expect(line?.unfinished).toContain('store');
        expect(bot.output()).not.toContain('bot.stopped');
      } finally {
        await relay.close();
      }
    },
  );

  it('ends at SHUTDOWN_TIMEOUT_MS whatever hangs, and logs what it left undone', async () => {
    await harness({ env: { SHUTDOWN_TIMEOUT_MS: '1500' } });
    const r = loadConfig(h.env);
    if (!r.ok) throw new Error(r.problems.join('\n'));
    const chunks: string[] = [];
    const destination = new Writable({
      write(chunk, _enc, cb) {
        chunks.push(String(chunk));
        cb();
      },
    });
    let release = () => {};
    const bot = await startBot(r.config, {
      logDestination: destination,
      // A database whose close never answers (a hung connection).
      openStore: async (url, log) => {
        const store = await openStore(url, log);
        return {
          ...store,
          close: () =>
            new Promise<void>((resolve) => {
              release = () => void store.close().then(resolve);
            }),
        };
      },
    });
    h.api.inject('create', { slowMs: 60_000 });
    await h.command('Add a quickstart');
    await eventually(() => h.api.requestsTo('create').length === 1, 'the create in flight');

    const started = performance.now();
    const stopped = await bot.stop().then(
      () => 'stopped',
      (err: Error) => err.name,
    );
    expect(stopped).toBe('ShutdownDeadlineError');
    expect(performance.now() - started).toBeLessThan(1_500 + 1_000);
    const text = chunks.join('');
    expect(logEvents(text, 'bot.shutdown_deadline')).toMatchObject([
      { timeoutMs: 1_500, unfinished: ['store'], inflight: expect.any(Number), queued: 0 },
    ]);
    expect(logEvents(text, 'bot.stopped')).toHaveLength(0);
    release();
  });
});
