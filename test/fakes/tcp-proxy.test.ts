import { createServer as createHttpServer } from 'node:http';
import { type AddressInfo, connect, createServer, type Server, type Socket } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { eventually, sleep } from '../helpers/net.ts';
import { TcpProxy } from './tcp-proxy.ts';

/** An echo server that remembers what it received and how many connections it saw. */
let target: Server;
let received: string;
let served: Socket[];
let proxy: TcpProxy;

beforeEach(async () => {
  received = '';
  served = [];
  target = createServer((s) => {
    served.push(s);
    s.on('error', () => {});
    s.on('data', (d) => {
      received += d.toString();
      s.write(d);
    });
  });
  await new Promise<void>((r) => target.listen(0, '127.0.0.1', r));
  proxy = await TcpProxy.start({ host: '127.0.0.1', port: (target.address() as AddressInfo).port });
});
afterEach(async () => {
  await proxy.close();
  for (const s of served) s.destroy();
  await new Promise((r) => target.close(r));
});

/** A client through the proxy, collecting what comes back and how it ended. */
async function client() {
  const s = connect(proxy.port, '127.0.0.1');
  const c = {
    socket: s,
    got: '',
    error: undefined as NodeJS.ErrnoException | undefined,
    closed: false,
  };
  s.on('data', (d) => {
    c.got += d.toString();
  });
  s.on('error', (err) => {
    c.error = err;
  });
  s.on('close', () => {
    c.closed = true;
  });
  await new Promise((r) => s.once('connect', r));
  return c;
}

describe('TcpProxy', () => {
  it('forwards bytes both ways, to the target it was given', async () => {
    const c = await client();
    c.socket.write('hello');
    await eventually(() => c.got === 'hello', 'the echo');
    expect(received).toBe('hello');
    expect(proxy.open).toBe(1);
    expect(proxy.rewrite('postgres://u@db.example:5432/x?sslmode=disable')).toBe(
      `postgres://u@127.0.0.1:${proxy.port}/x?sslmode=disable`,
    );
    c.socket.destroy();
  });

  it('delays every chunk in both directions, keeping their order', async () => {
    const c = await client();
    proxy.delay(150);
    const sent = Date.now();
    for (const part of ['a', 'b', 'c', 'd']) c.socket.write(part);
    // One way up and one way back: at least two delays, whatever the machine's speed.
    await eventually(() => c.got === 'abcd', 'the delayed echo');
    expect(Date.now() - sent).toBeGreaterThanOrEqual(300);
    expect(received).toBe('abcd');
    proxy.heal();
    c.got = '';
    c.socket.write('e');
    await eventually(() => c.got === 'e', 'the echo after the heal');
    c.socket.destroy();
  });

  it('black-holes open and new connections without closing them, and lets all through on heal', async () => {
    const c = await client();
    c.socket.write('before');
    await eventually(() => c.got === 'before', 'the first echo');
    proxy.blackhole();
    c.socket.write('held');
    const late = await client();
    late.socket.write('late');
    await sleep(300);
    expect(received).toBe('before');
    expect(c.got).toBe('before');
    expect(c.closed || late.closed).toBe(false);
    // A third client gives up during the black hole: its close waits for the heal too.
    const quitter = await client();
    quitter.socket.write('bye');
    await sleep(50);
    quitter.socket.destroy();
    await sleep(100);
    expect(proxy.open).toBe(3);
    // The connections opened since were accepted but never reached the target.
    expect(proxy.accepted).toBe(3);
    expect(served).toHaveLength(1);

    proxy.heal();
    await eventually(() => c.got === 'beforeheld', 'the held echo');
    await eventually(() => late.got === 'late', "the late connection's echo");
    // The quitter reaches the target after the heal, and its close follows.
    await eventually(() => proxy.open === 2, "the quitter's close");
    expect(received).toContain('late');
    c.socket.destroy();
    late.socket.destroy();
  });

  it('holds the answer too: a black hole opened after the request keeps the reply back', async () => {
    const c = await client();
    proxy.delay(100);
    c.socket.write('x');
    await eventually(() => received === 'x', 'the request at the target');
    proxy.blackhole();
    await sleep(250);
    expect(c.got).toBe('');
    proxy.heal();
    await eventually(() => c.got === 'x', 'the held reply');
    c.socket.destroy();
  });

  it('after a heal that strands, held connections stay silent and open while new ones go through', async () => {
    const old = await client();
    proxy.blackhole();
    old.socket.write('lost');
    const held = await client();
    proxy.heal({ strand: true });
    const fresh = await client();
    fresh.socket.write('fresh');
    await eventually(() => fresh.got === 'fresh', 'the new connection to work');
    await sleep(200);
    expect(received).toBe('fresh');
    expect(old.got + held.got).toBe('');
    expect(old.closed || held.closed).toBe(false);
    expect(served).toHaveLength(2); // old's, and fresh's; held never reached the target
    // The client gives up; the server never hears of it.
    old.socket.destroy();
    await sleep(200);
    expect(served[0]?.readableEnded || served[0]?.destroyed).toBe(false);
    for (const c of [held, fresh]) c.socket.destroy();
  });

  it('opens a black hole right after forwarding the chunk asked for', async () => {
    const c = await client();
    proxy.blackholeAfter((chunk) => chunk.includes('COMMIT'));
    c.socket.write('BEGIN');
    await eventually(() => c.got === 'BEGIN', 'the first echo');
    expect(proxy.blackholed).toBe(false);
    c.socket.write('COMMIT');
    await eventually(() => received === 'BEGINCOMMIT', 'the trigger at the target');
    expect(proxy.blackholed).toBe(true);
    await sleep(200);
    expect(c.got).toBe('BEGIN'); // its answer is held
    proxy.heal();
    await eventually(() => c.got === 'BEGINCOMMIT', 'the held answer');
    c.socket.destroy();
  });

  it('resets every connection on both sides', async () => {
    const c = await client();
    c.socket.write('hi');
    await eventually(() => c.got === 'hi', 'the echo');
    const upstreamReset = new Promise<string | undefined>((resolve) =>
      served[0]!.once('error', (err: NodeJS.ErrnoException) => resolve(err.code)),
    );
    proxy.reset();
    await eventually(() => c.closed, 'the client socket to close');
    expect(c.error?.code).toBe('ECONNRESET');
    expect(await upstreamReset).toBe('ECONNRESET');
    expect(proxy.open).toBe(0);
    // The proxy still accepts new connections after a reset.
    const again = await client();
    again.socket.write('again');
    await eventually(() => again.got === 'again', 'an echo after the reset');
    again.socket.destroy();
  });

  it('passes a close on, and stops listening when closed', async () => {
    const c = await client();
    c.socket.end();
    await eventually(() => served[0]?.readableEnded, 'the FIN at the target');
    await eventually(() => proxy.open === 0, 'the link to go');
    const port = proxy.port;
    await proxy.close();
    const refused = await new Promise<string | undefined>((resolve) => {
      const s = connect(port, '127.0.0.1');
      s.on('error', (err: NodeJS.ErrnoException) => resolve(err.code));
      s.on('connect', () => {
        s.destroy();
        resolve(undefined);
      });
    });
    expect(refused).toBe('ECONNREFUSED');
    // close() is safe to call again (afterEach does).
  });

  it('carries HTTP, as between the bot and the API emulator', async () => {
    const http = createHttpServer((req, res) => res.end(`you asked ${req.url}`));
    await new Promise<void>((r) => http.listen(0, '127.0.0.1', r));
    const api = await TcpProxy.start({
      host: '127.0.0.1',
      port: (http.address() as AddressInfo).port,
    });
    try {
      const base = api.rewrite(`http://127.0.0.1:${(http.address() as AddressInfo).port}/`);
      api.delay(20);
      expect(await (await fetch(`${base}v2/job/1`)).text()).toBe('you asked /v2/job/1');
      api.blackhole();
      const late = fetch(`${base}v2/job/2`, { signal: AbortSignal.timeout(300) });
      await expect(late).rejects.toThrow();
      api.heal();
      expect(await (await fetch(`${base}v2/job/3`)).text()).toBe('you asked /v2/job/3');
    } finally {
      await api.close();
      http.closeAllConnections();
      await new Promise((r) => http.close(r));
    }
  });
});
