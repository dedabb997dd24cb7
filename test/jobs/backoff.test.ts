import { describe, expect, it } from 'vitest';
import { freshFor, nextPollDelay } from '../../src/jobs/backoff.ts';

const opts = { baseMs: 1000, maxMs: 10_000 };

describe('poll back-off', () => {
  it('grows by half each quiet poll up to the ceiling', () => {
    const mid = () => 0.5;
    let interval = 0;
    const seen: number[] = [];
    for (let i = 0; i < 8; i++) {
      interval = nextPollDelay(interval, false, opts, mid).intervalMs;
      seen.push(interval);
    }
    expect(seen).toEqual([1000, 1500, 2250, 3375, 5063, 7595, 10_000, 10_000]);
  });

  it('resets to the first delay on a change, or while the job is fresh', () => {
    expect(nextPollDelay(8000, true, opts, () => 0.5).intervalMs).toBe(1000);
  });

  it('jitters by shortening the delay 1 to 10 %, so it never passes its interval or the ceiling', () => {
    expect(nextPollDelay(2000, false, opts, () => 0).delayMs).toBe(2970);
    expect(nextPollDelay(2000, false, opts, () => 0.999_999).delayMs).toBe(2700);
    expect(nextPollDelay(10_000, false, opts, () => 0).delayMs).toBe(9900);
    for (let i = 0; i < 1000; i++) {
      const { intervalMs, delayMs } = nextPollDelay(10_000, false, opts);
      expect(delayMs).toBeLessThanOrEqual(Math.floor(intervalMs * 0.99));
      expect(delayMs).toBeGreaterThanOrEqual(Math.floor(intervalMs * 0.9));
    }
  });

  it('keeps a job fresh for a minute, or a dozen first delays when those are shorter', () => {
    expect(freshFor({ baseMs: 5000, maxMs: 60_000 })).toBe(60_000);
    expect(freshFor({ baseMs: 100, maxMs: 400 })).toBe(1200);
    expect(freshFor({ baseMs: 100, maxMs: 400, freshMs: 0 })).toBe(0);
  });
});
