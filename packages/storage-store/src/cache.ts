/**
 * A bounded least-recently-used map of stored values for keys whose value
 * changes only through this process's own writes (conversations, document
 * state). It saves a store read per commit on the hot path.
 */
export class ValueCache {
  private readonly map = new Map<string, CachedValue>();
  constructor(private readonly capacity: number) {}

  get(key: string): CachedValue | undefined {
    const value = this.map.get(key);
    if (value !== undefined) {
      this.map.delete(key);
      this.map.set(key, value);
    }
    return value;
  }

  set(key: string, value: CachedValue): void {
    if (this.capacity <= 0) return;
    this.map.delete(key);
    this.map.set(key, value);
    if (this.map.size > this.capacity) this.map.delete(this.map.keys().next().value as string);
  }

  delete(key: string): void {
    this.map.delete(key);
  }
}

/** A stored value and, once a reader decoded it, the decoded form (shared: never mutated). */
export interface CachedValue {
  raw: string;
  decoded?: unknown;
}
