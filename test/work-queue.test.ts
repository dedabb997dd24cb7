import { expect, it } from 'vitest';
import { createInflight } from '../src/inflight.ts';
import { createLoopLoad } from '../src/loop-load.ts';
import { createWorkQueue } from '../src/work-queue.ts';
import { memoryLogger } from './helpers/log.ts';
import { eventually } from './helpers/net.ts';

function gate() {
  let open!: () => void;
  const opened = new Promise<void>((r) => {
    open = r;
  });
  return { open, opened };
}

it('runs queued work after the current turn, never more than `concurrency` at once', async () => {
  const inflight = createInflight();
  const q = createWorkQueue({
    concurrency: 2,
    capacity: 10,
    inflight,
    log: memoryLogger().log,
    hotMs: 0,
  });
  const gates = Array.from({ length: 5 }, gate);
  let running = 0;
  let most = 0;
  const started: number[] = [];
  for (const [i, g] of gates.entries())
    q.offer(`t${i}`, async () => {
      started.push(i);
      most = Math.max(most, ++running);
      await g.opened;
      running--;
    });
  // Nothing starts inside the turn that offered the work (the request's own turn).
  expect(started).toEqual([]);
  await new Promise((r) => setImmediate(r));
  expect(started).toEqual([0, 1]);
  for (const g of gates) g.open();
  const drained = await inflight.drain(5_000);
  expect(drained).toMatchObject({ pending: 5, left: 0 });
  expect(started).toEqual([0, 1, 2, 3, 4]);
  expect(most).toBe(2);
});

it('refuses work beyond its capacity, and a failing task neither stops the queue nor escapes', async () => {
  const { log, lines } = memoryLogger();
  const inflight = createInflight();
  const q = createWorkQueue({ concurrency: 1, capacity: 2, inflight, log });
  const g = gate();
  const done: string[] = [];
  expect(q.offer('a', () => Promise.reject(new Error('boom')))).toBe(true);
  const b = async () => {
    await g.opened;
    done.push('b');
  };
  expect(q.offer('b', b)).toBe(true);
  expect(q.hasRoom()).toBe(false);
  expect(q.offer('c', async () => void done.push('c'))).toBe(false);
  expect(q.size).toBe(2);
  g.open();
  await inflight.drain(5_000);
  expect(done).toEqual(['b']);
  expect(q.size).toBe(0);
  expect(lines().map((l) => l.msg)).toEqual(['work.queue_full', 'work.failed']);
});

it('runs one task at a time while requests keep coming, and widens once they pause', async () => {
  const inflight = createInflight();
  const q = createWorkQueue({ concurrency: 3, capacity: 10, inflight, log: memoryLogger().log });
  const g = gate();
  let running = 0;
  let most = 0;
  const sample: number[] = [];
  for (let i = 0; i < 4; i++)
    q.offer(`t${i}`, async () => {
      most = Math.max(most, ++running);
      await g.opened;
      running--;
    });
  await new Promise((r) => setImmediate(r));
  // Just offered: the queue is hot, so only one runs.
  sample.push(running);
  // Quiet since: the others start without any further offer.
  await eventually(() => running === 3 || undefined, 'the queue to widen');
  g.open();
  await inflight.drain(5_000);
  expect(sample).toEqual([1]);
  expect(most).toBe(3);
});

it('with `loadAbove`, throttles only while the event loop is that busy', async () => {
  let load = 0.2;
  const inflight = createInflight();
  const q = createWorkQueue({
    concurrency: 3,
    capacity: 10,
    inflight,
    log: memoryLogger().log,
    loadAbove: 0.8,
    loopLoad: () => load,
  });
  const g = gate();
  let running = 0;
  const offer = () =>
    q.offer('t', async () => {
      running++;
      await g.opened;
      running--;
    });
  for (let i = 0; i < 3; i++) offer();
  await new Promise((r) => setImmediate(r));
  // Requests just came, but the loop is mostly idle (the work waits on I/O): full width.
  const idle = running;
  g.open();
  await inflight.drain(5_000);
  const busy = gate();
  load = 0.95;
  for (let i = 0; i < 3; i++)
    q.offer('u', async () => {
      running++;
      await busy.opened;
      running--;
    });
  await new Promise((r) => setImmediate(r));
  // The loop is busy and requests keep coming: one at a time, the acks first.
  const loaded = running;
  busy.open();
  await inflight.drain(5_000);
  expect({ idle, loaded }).toEqual({ idle: 3, loaded: 1 });
});

it('measures the event loop as busy while it runs code and idle while it waits', async () => {
  const load = createLoopLoad(50);
  await new Promise((r) => setTimeout(r, 60));
  const waited = load();
  const end = performance.now() + 80;
  while (performance.now() < end) {
    // spin: the loop is busy
  }
  const spun = load();
  expect(waited).toBeLessThan(0.5);
  expect(spun).toBeGreaterThan(0.5);
});
