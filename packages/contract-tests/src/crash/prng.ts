/**
 * A small seeded generator (mulberry32) so a failing kill schedule can be
 * replayed with `CRASH_SEED`. Not for anything but test schedules; exported
 * so adapters' own seeded tests (kill moments, damage positions) use the
 * same generator instead of a copy.
 */
export class Prng {
  private state: number;

  constructor(readonly seed: number) {
    this.state = seed >>> 0;
  }

  /** Uniform in [0, 1). */
  next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  /** Integer in [min, max], both inclusive. */
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }

  /** An independent generator for a sub-scenario, derived from this seed. */
  fork(label: string): Prng {
    let hash = this.seed >>> 0;
    for (let i = 0; i < label.length; i++)
      hash = Math.imul(hash ^ label.charCodeAt(i), 0x01000193) >>> 0;
    return new Prng(hash);
  }
}

/** `CRASH_SEED` when set (a decimal uint32), else `fallback`, else a fresh random seed. */
export function crashSeed(fallback?: number, env: NodeJS.ProcessEnv = process.env): number {
  const text = env.CRASH_SEED;
  if (text === undefined || text === "")
    return fallback ?? Math.floor(Math.random() * 4294967296) >>> 0;
  const seed = Number(text);
  if (!Number.isSafeInteger(seed) || seed < 0 || seed > 0xffffffff)
    throw new RangeError(
      `CRASH_SEED must be an integer in [0, 4294967295], got ${JSON.stringify(text)}`,
    );
  return seed;
}

/** `CRASH_ITERATIONS` when set (a positive integer), else `fallback`. */
export function crashIterations(fallback: number, env: NodeJS.ProcessEnv = process.env): number {
  const text = env.CRASH_ITERATIONS;
  if (text === undefined || text === "") return fallback;
  const count = Number(text);
  if (!Number.isSafeInteger(count) || count < 1)
    throw new RangeError(
      `CRASH_ITERATIONS must be a positive integer, got ${JSON.stringify(text)}`,
    );
  return count;
}
