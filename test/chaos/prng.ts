/**
 * A small seeded PRNG (mulberry32) for the chaos runs: every random choice a run makes
 * (which scenario, how long to wait before a kill, which job finishes how) comes from one
 * seed, printed at the start, so `--seed N` replays the same decisions. Process scheduling
 * is not replayed, so a replay hits the same windows, not always the same instant.
 */
export class Prng {
  readonly seed: number;
  #state: number;

  constructor(seed: number) {
    this.seed = seed >>> 0;
    this.#state = this.seed;
  }

  /** A fresh seed for a run nobody pinned. */
  static randomSeed(): number {
    return Math.floor(Math.random() * 2 ** 31);
  }

  /** Uniform in [0, 1). */
  next(): number {
    this.#state = (this.#state + 0x6d2b79f5) >>> 0;
    let t = this.#state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  /** Integer in [min, max]. */
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }

  chance(p: number): boolean {
    return this.next() < p;
  }

  pick<T>(items: readonly T[]): T {
    const item = items[Math.floor(this.next() * items.length)];
    if (item === undefined) throw new Error('Prng.pick: no items');
    return item;
  }

  /** A child generator, so that one part drawing more numbers does not shift another's. */
  fork(): Prng {
    return new Prng(Math.floor(this.next() * 2 ** 32));
  }
}
