import { describe, expect, it } from 'vitest';
import { nextPollDelay } from '../../src/jobs/backoff.ts';

const opts = { baseMs: 1000, maxMs: 10_000 };

describe('poll back-off', () => {
  it('grows by half each quiet poll up to the ceiling', () => {
    const mid = () => 0.5; // no jitter
    let interval = 0;
    const seen: number[] = [];
    for (let i = 0; i < 8; i++) {
      interval = nextPollDelay(interval, false, opts, mid).intervalMs;
      seen.push(interval);
    }
    expect(seen).toEqual([1000, 1500, 2250, 3375, 5063, 7595, 10_000, 10_000]);
  });

  it('resets to the first delay on a change', () => {
    expect(nextPollDelay(8000, true, opts, () => 0.5).intervalMs).toBe(1000);
  });

  it('jitters by at most ten percent and never beyond the ceiling', () => {
    expect(nextPollDelay(2000, false, opts, () => 0).delayMs).toBe(2700);
    expect(nextPollDelay(2000, false, opts, () => 1).delayMs).toBe(3300);
    expect(nextPollDelay(10_000, false, opts, () => 1).delayMs).toBe(10_000);
  });
});
