import { describe, expect, it } from 'vitest';
import { createInflight } from '../src/inflight.ts';

function deferred() {
  let resolve!: () => void;
  let reject!: (err: Error) => void;
  const promise = new Promise<void>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

describe('in-flight work', () => {
  it('drains at once when nothing is in flight', async () => {
    expect(await createInflight().drain(10_000)).toMatchObject({ pending: 0, left: 0 });
  });

  it('waits for tracked work, failures included, and for work tracked during the drain', async () => {
    const inflight = createInflight();
    const a = deferred();
    const b = deferred();
    const tracked = inflight.track(a.promise);
    expect(tracked).toBe(a.promise);
    const drained = inflight.drain(10_000);
    inflight.track(b.promise).catch(() => {});
    a.resolve();
    await Promise.resolve();
    expect(inflight.pending).toBe(1);
    b.reject(new Error('handler failed'));
    expect(await drained).toMatchObject({ pending: 1, left: 0 });
    expect(inflight.pending).toBe(0);
  });

  it('gives up after the timeout and says how much was left', async () => {
    const inflight = createInflight();
    inflight.track(deferred().promise);
    expect(await inflight.drain(20)).toMatchObject({ pending: 1, left: 1 });
  });
});
