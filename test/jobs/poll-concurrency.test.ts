import { describe, expect, it } from 'vitest';
import { createPollConcurrency } from '../../src/jobs/poll-concurrency.ts';

/** The pool's width under a steady load, on an injected clock. */
function world(max = 128) {
  let clock = 0;
  const pool = createPollConcurrency({ max, now: () => clock });
  return {
    pool,
    /**
     * `seconds` of `rate` polls a second answered after `latencyMs` each; `lateMs`: the pool
     * was full and claimed jobs that late all along.
     */
    run(seconds: number, rate: number, latencyMs: number, lateMs = 0) {
      const n = Math.round(rate);
      for (let second = 0; second < seconds; second++) {
        const start = clock;
        for (let i = 0; i < n; i++) {
          clock = start + ((i + 0.5) * 1000) / n;
          pool.claimed(lateMs || 5);
          if (lateMs) pool.full();
          pool.answered(latencyMs);
        }
        // The pool's windows end on the second.
        clock = start + 1000;
        pool.width();
      }
      return pool.width();
    },
  };
}

describe('the poll pool width', () => {
  it('starts at 16 and stays there when little is due or the API is fast', () => {
    const w = world();
    expect(w.pool.width()).toBe(16);
    expect(w.run(5, 400, 5)).toBe(16);
    expect(world().run(5, 20, 150)).toBe(16);
  });

  it('follows Little: polls a second × latency, with a fifth of headroom', () => {
    const w = world();
    // 400 polls due a second at 150 ms: 60 in flight on average.
    expect(w.run(5, 400, 150)).toBe(72);
    // The API slows down gradually (the baseline follows): more in flight for the same rate.
    for (let ms = 160; ms <= 250; ms += 10) w.run(3, 400, ms);
    expect(w.pool.width()).toBe(120);
  });

  it('grows by half while the pool is full and the lag grows, up to the ceiling', () => {
    const w = world(100);
    // Every slot busy: what is answered is what the pool can do (width ÷ latency).
    const widths = [1, 2, 3, 4].map((s) => w.run(1, w.pool.width() / 0.15, 150, 1_000 * s));
    expect(widths).toEqual([24, 36, 54, 81]);
    expect(w.run(1, 81 / 0.15, 150, 5_000)).toBe(100);
    expect(w.run(3, 100 / 0.15, 150, 5_000)).toBe(100);
    // Caught up: back to what the rate needs, a tenth a second at most.
    expect([1, 2, 3].map(() => w.run(1, 100, 150))).toEqual([90, 81, 72]);
    expect(w.run(20, 100, 150)).toBe(18);
  });

  it('holds its width while a backlog drains, then settles to what the rate needs', () => {
    const w = world();
    expect([1, 2].map((s) => w.run(1, w.pool.width() / 0.15, 150, 1_000 * s))).toEqual([24, 36]);
    // The lag shrinks: wide enough; no more growth, and no narrowing before it is gone.
    const draining = [1_500, 1_000, 600].map((lag) => w.run(1, 36 / 0.15, 150, lag));
    expect(draining).toEqual([36, 36, 36]);
    expect(w.run(20, 100, 150)).toBe(18);
  });

  it('grows only every third second when a wider pool brings no more answers', () => {
    const w = world();
    // 100 answers a second however wide the pool: the bot's CPU or the database is the limit.
    const widths = [1, 2, 3, 4, 5, 6, 7].map((s) => w.run(1, 100, 150, 1_000 * s));
    expect(widths).toEqual([24, 24, 24, 36, 36, 36, 54]);
  });

  it('does not grow on a lag when the pool had free slots (the bottleneck is elsewhere)', () => {
    const w = world();
    for (let i = 0; i < 500; i++) w.pool.claimed(5_000);
    w.run(3, 100, 10);
    expect(w.pool.width()).toBe(16);
  });

  it('halves on a 429 at once, and regrows a tenth a second', () => {
    const w = world();
    w.run(3, 400, 150);
    const before = w.pool.width();
    w.pool.rateLimited();
    expect(w.pool.width()).toBe(Math.floor(before / 2));
    expect(w.pool.state().cap).toBe(Math.floor(before / 2));
    // A few seconds of healthy answers: the cap regrows a tenth a second, up to the need.
    expect(w.run(1, 400, 150)).toBe(Math.floor(before / 2));
    w.run(10, 400, 150);
    expect(w.pool.width()).toBe(before);
  });

  it('keeps halving while 429s go on, down to 2', () => {
    const w = world();
    w.run(3, 400, 150);
    for (let s = 0; s < 8; s++) {
      w.pool.rateLimited();
      w.run(1, 50, 150);
    }
    expect(w.pool.width()).toBe(2);
  });

  it('cuts the width when latency rises well above its baseline, and recovers', () => {
    const w = world();
    const healthy = w.run(5, 400, 150);
    expect(healthy).toBe(72);
    // The API struggles: answers take four times as long. Little alone would widen to 288.
    const struggling = [1, 2, 3].map(() => w.run(1, 400, 600));
    expect(struggling).toEqual([54, 40, 30]);
    expect(w.pool.state().baselineMs).toBeLessThan(300);
    w.run(20, 400, 150);
    expect(w.pool.width()).toBe(healthy);
  });

  it('does not take jitter of a fast API for a slowdown', () => {
    const w = world();
    w.run(3, 400, 2);
    w.run(3, 400, 30);
    expect(w.pool.state().cap).toBe(128);
  });

  it('never goes past its ceiling, nor under 1', () => {
    const small = world(3);
    expect(small.pool.width()).toBe(3);
    expect(small.run(3, 1000, 150, 2_000)).toBe(3);
    small.pool.rateLimited();
    expect(small.pool.width()).toBe(2);
    const one = world(1);
    one.pool.rateLimited();
    expect(one.pool.width()).toBe(1);
  });
});
