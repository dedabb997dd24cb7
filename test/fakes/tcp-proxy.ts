/**
 * A real TCP proxy for tests and benchmarks: it sits between the bot and a server it talks
 * to (PostgreSQL, the API emulator) and makes the network misbehave on demand.
 *
 * ```ts
 * const proxy = await TcpProxy.start({ host: '127.0.0.1', port: 5432 });
 * const url = proxy.rewrite('postgres://postgres@127.0.0.1:5432/db'); // same URL, proxy's port
 * proxy.delay(50);   // every chunk, both directions, arrives 50 ms later (order preserved)
 * proxy.blackhole(); // connections stay open, no byte passes; new ones are accepted, not forwarded
 * proxy.blackholeAfter((chunk) => chunk.includes('for update')); // the same, once that has passed
 * proxy.reset();     // every open connection is destroyed with a TCP RST, both sides
 * proxy.heal();      // no delay, no black hole: held bytes and held connections go through
 * proxy.heal({ strand: true }); // a failover: new connections go through, held ones never do
 * await proxy.close();
 * ```
 *
 * Listens on an ephemeral loopback port (`proxy.port`). Faults apply to open connections
 * as well as to new ones, and may be combined (a delay survives a black hole; `heal()`
 * lifts both).
 *
 * A black hole behaves like a partition, not like a dropped packet stream: the proxy stops
 * reading from both sides, so the bytes stay in the kernel's buffers (a writer eventually
 * sees backpressure), FINs are not seen or passed on, and nothing is lost: after `heal()`
 * what was held goes through in order, as TCP's retransmissions would deliver it. A client
 * that gave up meanwhile and closed its socket has its FIN passed on after the heal.
 * A connection accepted during a black hole is connected to the target only after `heal()`.
 * `heal({ strand: true })` is what a failover looks like to a client instead: the connections
 * the black hole held stay silent for ever (never forwarded, never closed, as those to a
 * primary that went away), while new ones reach the target.
 */
import { type AddressInfo, createServer, type Server, Socket } from 'node:net';

export interface Target {
  host: string;
  port: number;
}

/** One client connection and its upstream twin, with an ordered queue per direction. */
interface Link {
  client: Socket;
  upstream: Socket | undefined;
  /** Held by a black hole healed with `strand`: never forwarded again. */
  stranded: boolean;
  queues: { up: Promise<void>; down: Promise<void> };
}

export class TcpProxy {
  readonly host = '127.0.0.1';
  private delayMs = 0;
  private holding = false;
  /** Resolves when the black hole is lifted; replaced at each `blackhole()`. */
  private healed: Promise<void> = Promise.resolve();
  private release: () => void = () => {};
  private readonly links = new Set<Link>();
  private trigger: ((chunk: Buffer) => boolean) | undefined;
  /** Connections accepted in total, and how many of them reached the target. */
  accepted = 0;
  forwarded = 0;

  private readonly server: Server;
  private readonly target: Target;

  private constructor(server: Server, target: Target) {
    this.server = server;
    this.target = target;
  }

  static async start(target: Target): Promise<TcpProxy> {
    const server = createServer({ pauseOnConnect: true });
    const proxy = new TcpProxy(server, target);
    server.on('connection', (client) => proxy.accept(client));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve());
    });
    return proxy;
  }

  get port(): number {
    return (this.server.address() as AddressInfo).port;
  }

  /** `url` with its host and port replaced by the proxy's (postgres://, http://, …). */
  rewrite(url: string): string {
    const u = new URL(url);
    u.hostname = this.host;
    u.port = String(this.port);
    return u.toString();
  }

  /** Connections open through the proxy right now. */
  get open(): number {
    return this.links.size;
  }

  /** Adds `ms` of latency to every chunk from now on, both directions; 0 removes it. */
  delay(ms: number): void {
    this.delayMs = Math.max(0, ms);
  }

  /**
   * Opens a black hole right after the first client chunk that `match` picks has been
   * forwarded: the server acts on it, its answer is held. A partition in the middle of a
   * conversation (a transaction holding its locks, say), where the test chooses which.
   */
  blackholeAfter(match: (chunk: Buffer) => boolean): void {
    this.trigger = match;
  }

  /** Whether a black hole is open now. */
  get blackholed(): boolean {
    return this.holding;
  }

  /** Stops forwarding, both directions, without closing anything. */
  blackhole(): void {
    this.trigger = undefined;
    if (this.holding) return;
    this.holding = true;
    this.healed = new Promise((resolve) => {
      this.release = resolve;
    });
    for (const link of this.links) {
      link.client.pause();
      link.upstream?.pause();
    }
  }

  /** Destroys every open connection with a TCP RST, on both sides. */
  reset(): void {
    for (const link of this.links) this.drop(link, 'rst');
  }

  /**
   * Lifts every fault: no delay, no black hole. With `strand`, the connections the black
   * hole held stay held for ever (a failover); only new ones go through.
   */
  heal(opts: { strand?: boolean } = {}): void {
    this.delayMs = 0;
    if (!this.holding) return;
    this.holding = false;
    this.release();
    for (const link of [...this.links]) {
      if (opts.strand) link.stranded = true;
      if (link.stranded) continue;
      if (link.upstream) {
        link.client.resume();
        link.upstream.resume();
      } else this.connect(link);
    }
  }

  /** Stops listening and destroys every connection. */
  async close(): Promise<void> {
    this.heal();
    for (const link of this.links) this.drop(link, 'now');
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private accept(client: Socket): void {
    this.accepted++;
    const link: Link = {
      client,
      upstream: undefined,
      stranded: false,
      queues: { up: Promise.resolve(), down: Promise.resolve() },
    };
    this.links.add(link);
    client.on('error', () => this.closed(link, 'rst'));
    client.on('close', () => this.closed(link, 'flush'));
    if (!this.holding) this.connect(link);
  }

  private connect(link: Link): void {
    this.forwarded++;
    const upstream = new Socket();
    link.upstream = upstream;
    upstream.on('error', () => this.closed(link, 'rst'));
    upstream.on('close', () => this.closed(link, 'flush'));
    upstream.connect(this.target.port, this.target.host, () => {
      if (!this.links.has(link)) return;
      this.pipe(link, link.client, upstream, 'up');
      this.pipe(link, upstream, link.client, 'down');
    });
  }

  /** Forwards `from` to `to` through the direction's queue: delayed, held, in order. */
  private pipe(link: Link, from: Socket, to: Socket, dir: 'up' | 'down'): void {
    const forward = (write: () => void) => {
      const due = Date.now() + this.delayMs;
      link.queues[dir] = link.queues[dir].then(async () => {
        const wait = due - Date.now();
        if (wait > 0) await new Promise((r) => setTimeout(r, wait));
        // A chunk read just before the black hole opened waits for the heal too.
        while (this.holding) await this.healed;
        if (!link.stranded && !to.destroyed) write();
      });
    };
    from.on('data', (chunk: Buffer) =>
      forward(() => {
        to.write(chunk);
        if (dir === 'up' && this.trigger?.(chunk)) {
          this.trigger = undefined;
          this.blackhole();
        }
      }),
    );
    from.on('end', () => forward(() => to.end()));
    if (this.holding) from.pause();
    else from.resume();
  }

  /**
   * One side closed or failed: what is still queued for the other side goes first, and
   * the other side hears of it only once no black hole holds the link; a stranded link's
   * other side never does (as a vanished peer's never does).
   */
  private async closed(link: Link, how: 'rst' | 'flush'): Promise<void> {
    await Promise.all([link.queues.up, link.queues.down]);
    while (this.holding) await this.healed;
    if (!link.stranded) this.drop(link, how);
  }

  /** `rst`: abort both sides; `flush`: close them once written; `now`: destroy them. */
  private drop(link: Link, how: 'rst' | 'flush' | 'now'): void {
    if (!this.links.delete(link)) return;
    for (const s of [link.client, link.upstream]) {
      if (!s || s.destroyed) continue;
      // resetAndDestroy needs a connected socket; one still connecting is just destroyed.
      if (how === 'rst' && !s.connecting) s.resetAndDestroy();
      else if (how === 'flush') s.destroySoon();
      else s.destroy();
    }
  }
}
