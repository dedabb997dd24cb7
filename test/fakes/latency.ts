/**
 * How long the fakes take to answer: a base delay per call kind (a Slack method, an API
 * request kind, a Socket Mode envelope type) with jitter around it, and the two profiles
 * every benchmark runs at: "zero" (answers at once) and "realistic" (what the real services
 * take: Slack about 100 ms a call, the agent API about 1 s to create a job or take a
 * follow-up, 150 ms to read one, analytics reads 150 ms).
 *
 * Jitter is deterministic: the n-th call of a kind gets the same delay in every run with the
 * same seed, whatever other kinds were called in between, so a test can know what a call
 * will take and a benchmark's delays do not change from run to run.
 */

/** A delay: whole milliseconds, or milliseconds with a jitter of ±`jitter` (0.2 = ±20 %). */
export type Latency = number | { ms: number; jitter?: number };

export interface LatencyProfile {
  name: 'zero' | 'realistic';
  /** What benchmarks print as the profile's heading. */
  label: string;
  /** Every Slack Web API call, response_url post and upload (FakeSlack's `'*'`). */
  slack: Latency;
  /** Per agent/analytics request kind (ApiEmulator's `RequestKind`). */
  api: Record<'create' | 'message' | 'get' | 'analytics', Latency>;
  /** Slack → app delivery of each Socket Mode envelope (one way: half a round trip). */
  socketMode: Latency;
}

/** The jitter of every realistic delay: ±20 %. */
export const REALISTIC_JITTER = 0.2;

const jittered = (ms: number): Latency => ({ ms, jitter: REALISTIC_JITTER });

export const LATENCY_PROFILES = {
  zero: {
    name: 'zero',
    label: 'latency: zero',
    slack: 0,
    api: { create: 0, message: 0, get: 0, analytics: 0 },
    socketMode: 0,
  },
  realistic: {
    name: 'realistic',
    label: 'latency: realistic (Slack 100 ms, create 1 s, GET 150 ms)',
    slack: jittered(100),
    api: {
      create: jittered(1_000),
      message: jittered(1_000),
      get: jittered(150),
      analytics: jittered(150),
    },
    socketMode: jittered(50),
  },
} as const satisfies Record<string, LatencyProfile>;

export type LatencyName = keyof typeof LATENCY_PROFILES;

/** The profile called `name`; throws, naming the known ones, on anything else. */
export function latencyProfile(name: string): LatencyProfile {
  const profile = (LATENCY_PROFILES as Record<string, LatencyProfile>)[name];
  if (!profile)
    throw new Error(
      `unknown latency profile "${name}"; known: ${Object.keys(LATENCY_PROFILES).join(', ')}`,
    );
  return profile;
}

/** Milliseconds and jitter of a `Latency`, checked. */
export function normalise(l: Latency): { ms: number; jitter: number } {
  const { ms, jitter = 0 } = typeof l === 'number' ? { ms: l } : l;
  if (!(ms >= 0) || !(jitter >= 0 && jitter <= 1))
    throw new Error(`latency needs ms ≥ 0 and 0 ≤ jitter ≤ 1, got ${JSON.stringify(l)}`);
  return { ms, jitter };
}

/**
 * The delays of one fake: a base per kind (`'*'` for every kind without its own), and a
 * count per kind that picks each call's point in the jitter band.
 */
export class LatencyModel {
  private readonly base = new Map<string, { ms: number; jitter: number }>();
  private readonly counts = new Map<string, number>();
  private seed: number;

  constructor(seed = 1) {
    this.seed = seed;
  }

  /** `ms` (0 for none) for every call of `kind`, or of every kind without its own for `'*'`. */
  set(kind: string, latency: Latency): void {
    this.base.set(kind, normalise(latency));
  }

  /** Starts the jitter sequence again from `seed`: the same calls then get the same delays. */
  reseed(seed: number): void {
    this.seed = seed;
    this.counts.clear();
  }

  /** The delay of the next call of `kind`, in whole ms; counts the call. */
  next(kind: string): number {
    const spec = this.base.get(kind) ?? this.base.get('*');
    if (!spec || spec.ms === 0) return 0;
    const n = this.counts.get(kind) ?? 0;
    this.counts.set(kind, n + 1);
    if (spec.jitter === 0) return spec.ms;
    const u = hash(this.seed, kind, n) / 2 ** 32; // [0, 1)
    return Math.max(0, Math.round(spec.ms * (1 + spec.jitter * (2 * u - 1))));
  }
}

/** 32-bit hash of (seed, kind, n): murmur3's finaliser over the three. */
function hash(seed: number, kind: string, n: number): number {
  let h = Math.imul(seed ^ 0x9e3779b9, 0x85ebca6b);
  for (let i = 0; i < kind.length; i++) h = mix(h, kind.charCodeAt(i));
  return mix(h, n) >>> 0;
}

function mix(h: number, x: number): number {
  let m = Math.imul(h ^ (x | 0), 0x85ebca6b);
  m ^= m >>> 13;
  m = Math.imul(m, 0xc2b2ae35);
  return m ^ (m >>> 16);
}
