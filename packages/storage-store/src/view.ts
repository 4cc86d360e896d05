import type { RangeOptions } from "./key-value-store.js";

/** Reads used by the commit planner and the document materialiser. */
export interface Reader {
  /** `id`, when given, is the record id the key names: lets the reader skip ids above its high-water mark. */
  get(key: string, id?: number): Promise<string | undefined>;
  range(options: RangeOptions): AsyncIterable<[string, string]>;
  /** `get` then `decode`; the result may be shared with other callers, so it must not be mutated. */
  decoded<T>(
    key: string,
    id: number,
    decode: (key: string, raw: string) => T,
  ): Promise<T | undefined>;
}

/** Pending writes of one commit call: a value, or `null` for a delete. */
export type Pending = Map<string, string | null>;

/**
 * What a batch being planned sees: its own writes so far (top layer), the
 * writes of the earlier batches of the same call, then the store. Planning a
 * batch writes only into the top layer, so a refused batch is dropped by
 * dropping its layer: it leaves no trace.
 */
export class View implements Reader {
  constructor(
    private readonly base: Reader,
    private readonly layers: readonly Pending[],
  ) {}

  get(key: string, id?: number): Promise<string | undefined> {
    for (const layer of this.layers) {
      const value = layer.get(key);
      if (value !== undefined) return Promise.resolve(value === null ? undefined : value);
    }
    return this.base.get(key, id);
  }

  decoded<T>(
    key: string,
    id: number,
    decode: (key: string, raw: string) => T,
  ): Promise<T | undefined> {
    for (const layer of this.layers) {
      const value = layer.get(key);
      if (value !== undefined)
        return Promise.resolve(value === null ? undefined : decode(key, value));
    }
    return this.base.decoded(key, id, decode);
  }

  put(key: string, value: string): void {
    (this.layers[0] as Pending).set(key, value);
  }

  del(key: string): void {
    (this.layers[0] as Pending).set(key, null);
  }

  async *range(options: RangeOptions): AsyncGenerator<[string, string]> {
    const inRange = (key: string) =>
      (options.gte === undefined || key >= options.gte) &&
      (options.lt === undefined || key < options.lt);
    const pending = new Map<string, string | null>();
    for (let i = this.layers.length - 1; i >= 0; i--)
      for (const [key, value] of this.layers[i] as Pending)
        if (inRange(key)) pending.set(key, value);
    if (pending.size === 0) {
      yield* this.base.range(options);
      return;
    }
    const keys = [...pending.keys()].sort();
    if (options.reverse) keys.reverse();
    const before = options.reverse
      ? (a: string, b: string) => a > b
      : (a: string, b: string) => a < b;
    const limit = options.limit ?? Infinity;
    let count = 0;
    let p = 0;
    const emitPendingUntil = function* (bound: string | undefined): Generator<[string, string]> {
      while (
        p < keys.length &&
        count < limit &&
        (bound === undefined || before(keys[p] as string, bound))
      ) {
        const key = keys[p++] as string;
        const value = pending.get(key);
        if (value !== null && value !== undefined) {
          count++;
          yield [key, value];
        }
      }
    };
    const { limit: _limit, ...unlimited } = options;
    for await (const [key, value] of this.base.range(unlimited)) {
      yield* emitPendingUntil(key);
      if (count >= limit) return;
      if (pending.has(key)) {
        // Overridden by a pending write: emitted above (put) or hidden (delete).
        if (keys[p] === key) {
          const own = pending.get(key);
          p++;
          if (own !== null && own !== undefined) {
            count++;
            yield [key, own];
          }
        }
      } else {
        count++;
        yield [key, value];
      }
      if (count >= limit) return;
    }
    yield* emitPendingUntil(undefined);
  }
}
