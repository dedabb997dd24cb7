/**
 * Self-tests for the fakes' latency model (test/fakes/latency.ts): the jitter band, that it
 * is deterministic per kind and seed, and the two profiles the benchmarks run at. The fakes'
 * own test files check that the delays are applied.
 */
import { describe, expect, it } from 'vitest';
import { LATENCY_PROFILES, LatencyModel, latencyProfile } from './latency.ts';

const delays = (m: LatencyModel, kind: string, n: number) =>
  Array.from({ length: n }, () => m.next(kind));

describe('LatencyModel', () => {
  it('spreads delays over ms ± jitter, centred on ms', () => {
    const m = new LatencyModel();
    m.set('get', { ms: 150, jitter: 0.2 });
    const xs = delays(m, 'get', 400);
    expect(Math.min(...xs)).toBeGreaterThanOrEqual(120);
    expect(Math.max(...xs)).toBeLessThanOrEqual(180);
    // Spread over the band, not stuck at one value: both thirds of it are reached.
    expect(xs.filter((x) => x < 140).length).toBeGreaterThan(50);
    expect(xs.filter((x) => x > 160).length).toBeGreaterThan(50);
    const mean = xs.reduce((a, b) => a + b, 0) / xs.length;
    expect(mean).toBeGreaterThan(145);
    expect(mean).toBeLessThan(155);
  });

  it('is deterministic: the same seed gives each kind the same sequence, whatever the interleaving', () => {
    const spec = { ms: 100, jitter: 0.2 };
    const a = new LatencyModel(7);
    const b = new LatencyModel(7);
    for (const m of [a, b]) m.set('*', spec);
    const alone = delays(a, 'chat.postMessage', 20);
    const mixed: number[] = [];
    for (let i = 0; i < 20; i++) {
      b.next('chat.update'); // other kinds in between do not move this kind's sequence
      mixed.push(b.next('chat.postMessage'));
    }
    expect(mixed).toEqual(alone);
    const other = new LatencyModel(8);
    other.set('*', spec);
    expect(delays(other, 'chat.postMessage', 20)).not.toEqual(alone);
    a.reseed(7);
    expect(delays(a, 'chat.postMessage', 20)).toEqual(alone);
  });

  it("'*' covers kinds without their own; none set or 0 means no delay; bad values throw", () => {
    const m = new LatencyModel();
    expect(m.next('auth.test')).toBe(0);
    m.set('*', 100);
    m.set('auth.test', 0);
    m.set('chat.update', 250);
    expect([m.next('chat.postMessage'), m.next('auth.test'), m.next('chat.update')]).toEqual([
      100, 0, 250,
    ]);
    expect(() => m.set('x', { ms: 10, jitter: 2 })).toThrow(/jitter/);
    expect(() => m.set('x', -1)).toThrow(/ms/);
  });
});

describe('latency profiles', () => {
  it('realistic: Slack 100 ms, create and follow-up 1 s, reads 150 ms, each ±20 %; zero: none', () => {
    const r = latencyProfile('realistic');
    expect(r.slack).toEqual({ ms: 100, jitter: 0.2 });
    expect(r.api).toEqual({
      create: { ms: 1_000, jitter: 0.2 },
      message: { ms: 1_000, jitter: 0.2 },
      get: { ms: 150, jitter: 0.2 },
      analytics: { ms: 150, jitter: 0.2 },
    });
    expect(r.label).toBe('latency: realistic (Slack 100 ms, create 1 s, GET 150 ms)');
    const z = latencyProfile('zero');
    expect([z.slack, z.socketMode, ...Object.values(z.api)]).toEqual([0, 0, 0, 0, 0, 0]);
    expect(Object.keys(LATENCY_PROFILES)).toEqual(['zero', 'realistic']);
    expect(() => latencyProfile('fast')).toThrow(/known: zero, realistic/);
  });
});
