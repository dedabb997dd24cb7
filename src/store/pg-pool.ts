import { Socket } from 'node:net';
import type { PostgresPool, PostgresPoolClient } from 'kysely';
import pg from 'pg';
import type { Logger } from '../log.ts';
import { StoreTimeout } from './deadline.ts';
import { createPoolGate, inBackground, type PoolTurn, reservedFor } from './pool-gate.ts';

const INT8_OID = 20;
/** How long the client waits past `statement_timeout` before it gives up on the server. */
export const QUERY_GRACE_MS = 1_000;
/**
 * The hush (`createPoolGate`): background work waits while a person's queries run and this
 * long after the last (about the gap between two steps of a command), held back at most
 * `HOLD_MS` at a time, then let go for as long.
 */
const HUSH_MS = 25;
const HOLD_MS = 1_000;
/** An idle connection is probed by the kernel after this much silence. */
const KEEP_ALIVE_MS = 10_000;

export interface PoolOptions {
  log: Logger;
  max: number;
  /** DATABASE_TIMEOUT_MS: statements, connecting, waiting for a free connection. */
  timeoutMs: number;
}

/** The pool Kysely uses, and a close that ends even when the server does not answer. */
export interface BoundedPool {
  pool: PostgresPool;
  /**
   * Opens every connection the pool may hold, at once, and answers how many opened. A
   * connection that opened stays open: a burst after a quiet spell, or the first one after a
   * start, does not wait for connections to be set up (about 40 ms each, and up to 300 ms
   * for ten at once on a loaded server).
   */
  fill(): Promise<number>;
  /** Ends the pool; after `ms`, connections that did not say goodbye are cut. */
  end(ms: number): Promise<void>;
}

/**
 * A pg pool that never waits forever on the server:
 * - `statement_timeout` (the server cancels a statement after `timeoutMs`; the connection
 *   stays usable) and `query_timeout` (the client gives up `QUERY_GRACE_MS` later, when the
 *   server itself does not answer: a partition, a failed-over primary);
 * - `connectionTimeoutMillis`: connecting, or waiting for a free connection, gives up too;
 * - `idle_in_transaction_session_timeout`: a transaction whose client vanished does not
 *   hold its locks (advisory ones included) on the server for ever;
 * - TCP keep-alive, so that the kernel finds a dead idle connection by itself;
 * - a connection whose query got no answer is thrown away rather than given back to the
 *   pool, where the next query would queue behind the one that hangs.
 * The pool is of a fixed size once filled: an idle connection is not closed (`min` is the
 * pool's size), since opening one again is what a burst after a quiet spell would wait for.
 * Connections are handed out through a gate (src/store/pool-gate.ts): the background
 * loops' work waits behind a person's and leaves a few connections free for it.
 */
export function createBoundedPool(url: string, opts: PoolOptions): BoundedPool {
  const sockets = new Set<Socket>();
  const pool = new pg.Pool({
    connectionString: url,
    max: opts.max,
    connectionTimeoutMillis: opts.timeoutMs,
    statement_timeout: opts.timeoutMs,
    query_timeout: opts.timeoutMs + QUERY_GRACE_MS,
    idle_in_transaction_session_timeout: opts.timeoutMs,
    keepAlive: true,
    keepAliveInitialDelayMillis: KEEP_ALIVE_MS,
    // Idle connections stay (pg-pool closes only those above `min`).
    min: opts.max,
    // Our own sockets, so that a close can cut the ones the server no longer answers on.
    stream: () => {
      const socket = new Socket();
      sockets.add(socket);
      socket.once('close', () => sockets.delete(socket));
      return socket;
    },
    // Epoch milliseconds are BIGINT; every one we store fits a double exactly.
    types: {
      getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
        oid === INT8_OID
          ? (v: string) => Number(v)
          : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
    },
  });
  // An idle connection that dies (server restart, network) is replaced on next use; without
  // a listener the pool's 'error' event would end the process.
  pool.on('error', (err) => opts.log.warn({ err, component: 'store' }, 'store.connection_lost'));

  const gate = createPoolGate(opts.max, {
    reserved: reservedFor(opts.max),
    timeoutMs: opts.timeoutMs,
    hushMs: HUSH_MS,
    holdMs: HOLD_MS,
  });
  const bounded: PostgresPool = {
    options: pool.options,
    connect: async () => {
      const turn = await gate.enter(inBackground());
      try {
        return discardingHung(
          await pool.connect(),
          turn,
          opts.log,
          opts.timeoutMs + QUERY_GRACE_MS,
        );
      } catch (err) {
        turn.leave();
        throw err;
      }
    },
    end: () => pool.end(),
  };
  return {
    pool: bounded,
    // Past the gate: nothing waits on these, and each goes back to the pool as it opens
    // (to a query waiting for it first).
    async fill() {
      const opened = await Promise.all(
        Array.from({ length: opts.max }, () =>
          pool.connect().then(
            (client) => {
              client.release();
              return 1;
            },
            () => 0,
          ),
        ),
      );
      return opened.reduce((a, b) => a + b, 0);
    },
    async end(ms) {
      let timer: NodeJS.Timeout | undefined;
      const cut = new Promise<'cut'>((resolve) => {
        timer = setTimeout(() => resolve('cut'), ms);
      });
      const ended = pool.end().catch(() => {});
      if ((await Promise.race([ended, cut])) === 'cut') {
        opts.log.warn({ open: sockets.size, waitedMs: ms }, 'store.close_cut');
        for (const s of sockets) s.destroy();
        await ended;
      }
      clearTimeout(timer);
    },
  };
}

/**
 * A pooled client that is destroyed on release once a query on it failed without an answer
 * from the server (not a DatabaseError: a read timeout, a broken socket). Its later queries
 * fail at once (a transaction's ROLLBACK would otherwise wait its own timeout behind the
 * hung one). While checked out, a connection that dies between two queries is noted here:
 * the pool listens only to idle clients, and an 'error' nobody hears ends the process.
 */
function discardingHung(
  client: pg.PoolClient,
  turn: PoolTurn,
  log: Logger,
  readMs: number,
): PostgresPoolClient {
  let hung: Error | undefined;
  const died = (err: Error) => {
    hung ??= err;
    log.warn({ err, component: 'store' }, 'store.connection_lost');
  };
  client.on('error', died);
  const query = (...args: unknown[]) => {
    if (hung) return Promise.reject(hung);
    const run = (client.query as (...a: unknown[]) => unknown)(...args);
    if (!(run instanceof Promise)) return run; // a cursor; Kysely streams none of ours
    return run.catch((err: unknown) => {
      if (err instanceof pg.DatabaseError) throw err;
      const e = err instanceof Error ? err : new Error(String(err));
      hung ??= e;
      log.warn({ err, component: 'store' }, 'store.query_unanswered');
      // pg's own words for its query_timeout; callers see the typed error.
      throw e.message === 'Query read timeout' ? new StoreTimeout('a query', readMs) : e;
    });
  };
  return {
    query: query as PostgresPoolClient['query'],
    release: (destroy?: boolean) => {
      client.removeListener('error', died);
      client.release(hung ?? (destroy ? true : undefined));
      turn.leave();
    },
  };
}
