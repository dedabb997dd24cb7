import { afterEach, describe, expect, it } from 'vitest';
import { createLiveness } from '../../src/app/liveness.ts';
import { StoreTimeout } from '../../src/store/deadline.ts';
import { createBoundedPool } from '../../src/store/pg-pool.ts';
import {
  backgroundStore,
  createPoolGate,
  inBackground,
  reservedFor,
  runInBackground,
} from '../../src/store/pool-gate.ts';
import type { Store } from '../../src/store/types.ts';
import { memoryLogger } from '../helpers/log.ts';
import { createTestDatabase, postgresAvailable, type TestDatabase } from '../helpers/postgres.ts';

const tick = () => new Promise((r) => setImmediate(r));

describe('pool gate: who gets a connection first', () => {
  it('lets background work take at most max - reserved, and the foreground the rest', async () => {
    const gate = createPoolGate(4, { reserved: 1, timeoutMs: 5_000 });
    const bg = await Promise.all([gate.enter(true), gate.enter(true), gate.enter(true)]);
    let fourth = false;
    void gate.enter(true).then(() => {
      fourth = true;
    });
    await tick();
    expect(fourth).toBe(false); // the reserved connection is not background work's
    const fg = await gate.enter(false); // at once: the reserved one
    expect(gate.counts()).toEqual({ inUse: 4, background: 3, waiting: 0, backgroundWaiting: 1 });
    fg.leave();
    await tick();
    expect(fourth).toBe(false); // still three background turns out
    bg[0]!.leave();
    await tick();
    expect(fourth).toBe(true);
  });

  it('serves waiting foreground work before waiting background work, each in arrival order', async () => {
    const gate = createPoolGate(2, { reserved: 0, timeoutMs: 5_000 });
    const held = [await gate.enter(true), await gate.enter(false)];
    const order: string[] = [];
    const wait = (name: string, background: boolean) =>
      gate.enter(background).then((t) => {
        order.push(name);
        return t;
      });
    const waiting = [wait('bg1', true), wait('bg2', true), wait('fg1', false), wait('fg2', false)];
    for (const t of held) t.leave();
    await tick();
    expect(order).toEqual(['fg1', 'fg2']);
    for (const t of await Promise.all(waiting.slice(2))) t.leave();
    await tick();
    expect(order).toEqual(['fg1', 'fg2', 'bg1', 'bg2']);
  });

  it('gives a turn back once however often it is left', async () => {
    const gate = createPoolGate(2, { reserved: 1, timeoutMs: 5_000 });
    const t = await gate.enter(false);
    t.leave();
    t.leave();
    expect(gate.counts().inUse).toBe(0);
  });

  it('fails a wait longer than the timeout with StoreTimeout and forgets the waiter', async () => {
    const gate = createPoolGate(1, { reserved: 0, timeoutMs: 50 });
    const held = await gate.enter(false);
    await expect(gate.enter(false)).rejects.toBeInstanceOf(StoreTimeout);
    held.leave();
    expect(gate.counts()).toEqual({ inUse: 0, background: 0, waiting: 0, backgroundWaiting: 0 });
  });

  it('reserves a quarter of a pool, at least one, none of a single connection', () => {
    expect([1, 2, 4, 10, 20].map(reservedFor)).toEqual([0, 1, 1, 2, 5]);
  });

  it("marks every call of a background store, and nobody else's", async () => {
    const seen: boolean[] = [];
    const store = {
      ping: async () => {
        await tick();
        seen.push(inBackground());
      },
    } as unknown as Store;
    await backgroundStore(store).ping();
    await store.ping();
    expect(seen).toEqual([true, false]);
  });

  it("marks the background loops' stores (src/app/liveness.ts) as background", async () => {
    let marked: boolean | undefined;
    const store = {
      ping: async () => {
        marked = inBackground();
      },
    } as unknown as Store;
    await createLiveness(store, { deadlineMs: 1_000 }).loopStore('poller', 1_000).ping();
    expect(marked).toBe(true);
  });
});

describe.skipIf(!postgresAvailable)('pool gate on a real PostgreSQL pool', () => {
  let database: TestDatabase | undefined;
  afterEach(async () => {
    await database?.drop();
    database = undefined;
  });

  it("gives a person's query a connection while background queries hold all they may", async () => {
    database = await createTestDatabase();
    const bounded = createBoundedPool(database.url, {
      log: memoryLogger().log,
      max: 4,
      timeoutMs: 10_000,
    });
    const order: string[] = [];
    const query = async (name: string, text: string) => {
      const client = await bounded.pool.connect();
      try {
        await client.query(text as never);
      } finally {
        client.release();
      }
      order.push(name);
    };
    try {
      // Five slow background queries: without the gate they take all four connections and
      // the fifth queues ahead of the person's.
      const slow = [1, 2, 3, 4, 5].map((i) =>
        runInBackground(() => query(`bg${i}`, 'select pg_sleep(0.4)')),
      );
      await new Promise((r) => setTimeout(r, 100));
      await query('fg', 'select 1');
      await Promise.all(slow);
      expect(order[0]).toBe('fg');
      expect(order).toHaveLength(6);
    } finally {
      await bounded.end(2_000);
    }
  });
});
