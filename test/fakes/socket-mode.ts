/**
 * A fake Slack Socket Mode endpoint: a `ws` server on 127.0.0.1 that greets with `hello`, pushes
 * envelopes, collects acks, pings like Slack does and can ask the client to reconnect. Connection
 * URLs are single-use tickets handed out through apps.connections.open (see FakeSlack), as in
 * Slack, so a client that reuses a stale URL on reconnect fails here too.
 */
import { randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { type WebSocket, WebSocketServer } from 'ws';
import { type Latency, LatencyModel, type LatencyProfile } from './latency.ts';

export type EnvelopeType = 'slash_commands' | 'events_api' | 'interactive';
export interface Envelope {
  envelope_id: string;
  type: EnvelopeType;
  payload: unknown;
  accepts_response_payload: boolean;
  retry_attempt?: number;
  retry_reason?: string;
}
export interface Ack {
  envelope_id: string;
  payload?: unknown;
  at: number;
  /** Slack gives up (and retries events) after 3 s; tests can assert on this. */
  latencyMs: number;
}

const DEBUG_INFO = { host: 'applink-fake-1', build_number: 1, approximate_connection_time: 18060 };

export class FakeSocketMode {
  readonly acks: Ack[] = [];
  readonly sent: Envelope[] = [];
  /** Connections accepted so far (each one got a hello). */
  connections = 0;
  private readonly wss: WebSocketServer;
  private readonly live: WebSocket[] = [];
  private readonly draining = new WeakSet<WebSocket>();
  private readonly tickets = new Set<string>();
  private readonly pending = new Map<string, { sentAt: number; done: (a: Ack) => void }>();
  private readonly onConnect = new Set<() => void>();
  private turn = -1;
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly latency = new LatencyModel();

  private constructor(pingIntervalMs: number) {
    this.wss = new WebSocketServer({
      host: '127.0.0.1',
      port: 0,
      // Unknown or reused tickets are refused during the handshake.
      verifyClient: (info, cb) => {
        const ticket = new URL(info.req.url ?? '/', 'ws://x').searchParams.get('ticket');
        if (ticket && this.tickets.delete(ticket)) cb(true);
        else cb(false, 401, 'invalid or used ticket');
      },
    });
    this.wss.on('connection', (ws) => this.accept(ws));
    // Slack pings every few seconds; the client only arms its server-ping watchdog once pinged.
    this.every(pingIntervalMs, () => {
      for (const ws of this.live) ws.ping();
    });
  }

  static async start(opts: { pingIntervalMs?: number } = {}): Promise<FakeSocketMode> {
    const fake = new FakeSocketMode(opts.pingIntervalMs ?? 5000);
    await new Promise<void>((resolve) => fake.wss.once('listening', resolve));
    return fake;
  }

  /** Server base address; clients connect with a ticketed `connectionUrl()`. */
  get url(): string {
    return `ws://127.0.0.1:${(this.wss.address() as AddressInfo).port}/link/`;
  }

  /** A fresh single-use URL, as apps.connections.open returns. */
  connectionUrl(): string {
    const ticket = randomUUID();
    this.tickets.add(ticket);
    return `${this.url}?ticket=${ticket}&app_id=A0001`;
  }

  /**
   * Each envelope reaches the client that much later (Slack → app, one way; 0 for none), per
   * envelope type or `'*'` for all; an ack's `latencyMs` includes it, as Slack's 3 s do.
   */
  setLatency(type: EnvelopeType | '*', latency: Latency): void {
    this.latency.set(type, latency);
  }

  /** A benchmark's latency profile: its delivery delay for every envelope. */
  useLatency(profile: LatencyProfile): void {
    this.latency.set('*', profile.socketMode);
  }

  /** Resolves once a connection is open and not asked to go away. */
  waitForConnection(timeoutMs = 5000): Promise<void> {
    return new Promise((resolve, reject) => {
      if (this.openConnections() > 0) return resolve();
      const check = () => {
        clearTimeout(timer);
        this.onConnect.delete(check);
        resolve();
      };
      const timer = setTimeout(() => {
        this.onConnect.delete(check);
        reject(
          new Error(`no Socket Mode connection within ${timeoutMs}ms (${this.connections} so far)`),
        );
      }, timeoutMs);
      this.onConnect.add(check);
    });
  }

  /**
   * Push an envelope to the newest live connection (waiting for one if the client is between
   * connections) and resolve with the client's ack.
   */
  async send(
    type: EnvelopeType,
    payload: unknown,
    opts: { retryAttempt?: number; retryReason?: string; timeoutMs?: number } = {},
  ): Promise<{ envelope_id: string; payload?: unknown }> {
    const timeoutMs = opts.timeoutMs ?? 5000;
    const deadline = Date.now() + timeoutMs;
    await this.waitForConnection(timeoutMs);
    const ws = this.active();
    if (!ws) throw new Error('Socket Mode connection vanished before send');
    const envelope: Envelope = {
      envelope_id: randomUUID(),
      type,
      payload,
      accepts_response_payload: acceptsResponse(type, payload),
      // Only Events API envelopes carry retry fields.
      ...(type === 'events_api'
        ? { retry_attempt: opts.retryAttempt ?? 0, retry_reason: opts.retryReason ?? '' }
        : {}),
    };
    this.sent.push(envelope);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(
        () => {
          this.pending.delete(envelope.envelope_id);
          reject(
            new Error(`no ack for ${type} envelope ${envelope.envelope_id} within ${timeoutMs}ms`),
          );
        },
        Math.max(0, deadline - Date.now()),
      );
      this.pending.set(envelope.envelope_id, {
        sentAt: Date.now(),
        done: (ack) => {
          clearTimeout(timer);
          const { envelope_id, payload } = ack;
          resolve(payload === undefined ? { envelope_id } : { envelope_id, payload });
        },
      });
      const delayMs = this.latency.next(type);
      if (delayMs === 0) return ws.send(JSON.stringify(envelope));
      const t = setTimeout(() => {
        this.timers.delete(t);
        if (ws.readyState === ws.OPEN) ws.send(JSON.stringify(envelope));
      }, delayMs);
      this.timers.add(t);
    });
  }

  /**
   * Slack's "please reconnect" message. Slack closes the socket itself a little later if the
   * client does not; `closeAfterMs` mimics that.
   */
  disconnect(reason = 'refresh_requested', opts: { closeAfterMs?: number } = {}): void {
    for (const ws of this.live) {
      if (this.draining.has(ws)) continue;
      this.draining.add(ws);
      ws.send(
        JSON.stringify({ type: 'disconnect', reason, debug_info: { host: DEBUG_INFO.host } }),
      );
      this.after(opts.closeAfterMs ?? 10_000, () => ws.terminate());
    }
  }

  async close(): Promise<void> {
    for (const t of this.timers) clearTimeout(t);
    for (const ws of this.live) ws.terminate();
    await new Promise<void>((resolve) => this.wss.close(() => resolve()));
  }

  private accept(ws: WebSocket): void {
    this.connections += 1;
    this.live.push(ws);
    ws.on('close', () => {
      const i = this.live.indexOf(ws);
      if (i >= 0) this.live.splice(i, 1);
    });
    ws.on('message', (data, isBinary) => {
      if (!isBinary) this.onMessage(String(data));
    });
    const num_connections = this.live.filter((w) => !this.draining.has(w)).length;
    ws.send(
      JSON.stringify({
        type: 'hello',
        num_connections,
        debug_info: DEBUG_INFO,
        connection_info: { app_id: 'A0001' },
      }),
    );
    for (const notify of [...this.onConnect]) notify();
  }

  private onMessage(text: string): void {
    let msg: unknown;
    try {
      msg = JSON.parse(text);
    } catch {
      return; // Slack ignores garbage too
    }
    if (typeof msg !== 'object' || msg === null || !('envelope_id' in msg)) return;
    const { envelope_id, payload } = msg as { envelope_id: string; payload?: unknown };
    const pending = this.pending.get(envelope_id);
    const ack: Ack = {
      envelope_id,
      payload,
      at: Date.now(),
      latencyMs: pending ? Date.now() - pending.sentAt : Number.NaN,
    };
    this.acks.push(ack); // late or unknown acks are recorded too
    this.pending.delete(envelope_id);
    pending?.done(ack);
  }

  /**
   * The connection the next envelope goes to. Slack spreads an app's envelopes over all of
   * its open connections (up to 10, e.g. one per replica); here they take turns.
   */
  private active(): WebSocket | undefined {
    const open = this.live.filter((ws) => ws.readyState === ws.OPEN && !this.draining.has(ws));
    if (open.length === 0) return undefined;
    this.turn = (this.turn + 1) % open.length;
    return open[this.turn];
  }

  /** Open connections envelopes can go to (one per connected client). */
  openConnections(): number {
    return this.live.filter((ws) => ws.readyState === ws.OPEN && !this.draining.has(ws)).length;
  }

  private after(ms: number, fn: () => void): void {
    const t = setTimeout(() => {
      this.timers.delete(t);
      fn();
    }, ms);
    t.unref();
    this.timers.add(t);
  }

  private every(ms: number, fn: () => void): void {
    const t = setInterval(fn, ms);
    t.unref();
    this.timers.add(t);
  }
}

/** Slack lets acks carry a response only where it has somewhere to show it. */
function acceptsResponse(type: EnvelopeType, payload: unknown): boolean {
  if (type === 'slash_commands') return true;
  if (type !== 'interactive' || typeof payload !== 'object' || payload === null) return false;
  const kind = (payload as { type?: unknown }).type;
  return kind === 'view_submission' || kind === 'block_suggestion';
}
