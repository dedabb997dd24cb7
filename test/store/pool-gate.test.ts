import { afterEach, describe, expect, it, vi } from 'vitest';
import { createLiveness } from '../../src/app/liveness.ts';
import { StoreTimeout } from '../../src/store/deadline.ts';
import { createBoundedPool } from '../../src/store/pg-pool.ts';
import {
  backgroundStore,
  createPoolGate,
  inBackground,
  type PoolGate,
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

  describe('the hush: background work waits while a person is served', () => {
    afterEach(() => {
      vi.useRealTimers();
    });
    const hushed = () => {
      vi.useFakeTimers();
      return createPoolGate(10, {
        reserved: 1,
        timeoutMs: 10_000,
        hushMs: 30,
        holdMs: 500,
        now: () => Date.now(),
      });
    };
    const entered = (gate: PoolGate, background: boolean) => {
      const state = { in: false };
      void gate.enter(background).then(() => {
        state.in = true;
      });
      return state;
    };

    it('holds background work while a foreground turn is out and hushMs after it', async () => {
      const gate = hushed();
      const fg = await gate.enter(false);
      const bg = entered(gate, true);
      await vi.advanceTimersByTimeAsync(200);
      expect(bg.in).toBe(false); // free connections, but a person is being served
      expect(gate.counts().backgroundWaiting).toBe(1);
      fg.leave();
      await vi.advanceTimersByTimeAsync(20);
      expect(bg.in).toBe(false); // the gap between two steps of a command
      await vi.advanceTimersByTimeAsync(15);
      expect(bg.in).toBe(true);
    });

    it('lets background work in at once when no person has been served lately', async () => {
      const gate = hushed();
      (await gate.enter(false)).leave();
      await vi.advanceTimersByTimeAsync(31);
      const bg = entered(gate, true);
      await vi.advanceTimersByTimeAsync(0);
      expect(bg.in).toBe(true);
    });

    it('holds background work at most holdMs, then lapses for as long, however busy people are', async () => {
      const gate = hushed();
      const fg = await gate.enter(false); // a person's work that does not pause
      const first = entered(gate, true);
      await vi.advanceTimersByTimeAsync(300);
      const second = entered(gate, true); // held with the first: the hush holds, not each waiter
      await vi.advanceTimersByTimeAsync(190);
      expect([first.in, second.in]).toEqual([false, false]);
      await vi.advanceTimersByTimeAsync(20);
      expect([first.in, second.in]).toEqual([true, true]);
      // The lapse: background work goes at once for holdMs...
      await vi.advanceTimersByTimeAsync(400);
      const during = entered(gate, true);
      await vi.advanceTimersByTimeAsync(0);
      expect(during.in).toBe(true);
      // ...and then the hush holds again.
      await vi.advanceTimersByTimeAsync(200);
      const after = entered(gate, true);
      await vi.advanceTimersByTimeAsync(400);
      expect(after.in).toBe(false);
      fg.leave();
      await vi.advanceTimersByTimeAsync(31);
      expect(after.in).toBe(true);
    });

    it('does not hold a foreground waiter', async () => {
      const gate = hushed();
      await gate.enter(false);
      const second = entered(gate, false);
      await vi.advanceTimersByTimeAsync(0);
      expect(second.in).toBe(true);
    });
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
  let bounded: ReturnType<typeof createBoundedPool> | undefined;
  afterEach(async () => {
    await bounded?.end(2_000);
    await database?.drop();
    bounded = undefined;
    database = undefined;
  });

  /** A pool of 4 on a fresh database, and a query that notes its name once answered. */
  async function pool() {
    database = await createTestDatabase();
    const opened = createBoundedPool(database.url, {
      log: memoryLogger().log,
      max: 4,
      timeoutMs: 10_000,
    });
    bounded = opened;
    const order: string[] = [];
    const query = async (name: string, text: string) => {
      const client = await opened.pool.connect();
      try {
        await client.query(text as never);
      } finally {
        client.release();
      }
      order.push(name);
    };
    return { order, query };
  }

  it("gives a person's query a connection while background queries hold all they may", async () => {
    const { order, query } = await pool();
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
  });

  it("holds background queries back while a person's query runs, connections free or not", async () => {
    const { order, query } = await pool();
    const person = query('fg', 'select pg_sleep(0.3)');
    await new Promise((r) => setTimeout(r, 50));
    // Three connections are free, and a quick query; it still waits for the person's.
    await runInBackground(() => query('bg', 'select 1'));
    await person;
    expect(order).toEqual(['fg', 'bg']);
  });
});
