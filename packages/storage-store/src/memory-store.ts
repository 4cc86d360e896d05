import { StorageClosed } from "@durably/core";
import type { KeyValueOp, KeyValueStore, RangeOptions } from "./key-value-store.js";

type Pair = readonly [string, string];

/**
 * An in-memory ordered `KeyValueStore`: one sorted array of pairs, found by
 * binary search. A range iterates a snapshot: while iterators are open, a
 * write copies the array first (copy-on-write), so readers never see a
 * half-applied write and writers never wait for readers. Nothing persists.
 */
export class MemoryStore implements KeyValueStore {
  readonly persistent = false;
  private pairs: Pair[] = [];
  private readers = 0;
  private closed = false;

  /** Number of keys stored. */
  get size(): number {
    return this.pairs.length;
  }

  get(key: string): Promise<string | undefined> {
    if (this.closed) return Promise.reject(closedError());
    const i = lowerBound(this.pairs, key);
    const pair = this.pairs[i];
    return Promise.resolve(pair !== undefined && pair[0] === key ? pair[1] : undefined);
  }

  range(options: RangeOptions): AsyncIterable<[string, string]> {
    const pairs = this.snapshot(options);
    const step = (run: () => IteratorResult<[string, string]>) => {
      try {
        return Promise.resolve(run());
      } catch (error) {
        return Promise.reject(error instanceof Error ? error : new Error(String(error)));
      }
    };
    return {
      [Symbol.asyncIterator]: () => ({
        next: () => step(() => pairs.next()),
        return: () => step(() => pairs.return(undefined)),
      }),
    };
  }

  /** The pairs of a range, from the array as it was when iteration started. */
  private *snapshot(options: RangeOptions): Generator<[string, string], undefined> {
    if (this.closed) throw closedError();
    const snapshot = this.pairs;
    const start = options.gte === undefined ? 0 : lowerBound(snapshot, options.gte);
    const end = options.lt === undefined ? snapshot.length : lowerBound(snapshot, options.lt);
    const limit = options.limit ?? Infinity;
    this.readers++;
    try {
      let count = 0;
      if (options.reverse) {
        for (let i = end - 1; i >= start && count < limit; i--, count++) {
          const pair = snapshot[i] as Pair;
          yield [pair[0], pair[1]];
        }
      } else {
        for (let i = start; i < end && count < limit; i++, count++) {
          const pair = snapshot[i] as Pair;
          yield [pair[0], pair[1]];
        }
      }
    } finally {
      this.readers--;
    }
    return undefined;
  }

  write(ops: readonly KeyValueOp[]): Promise<void> {
    if (this.closed) return Promise.reject(closedError());
    // Validate everything before changing anything: the write is atomic.
    for (const op of ops) {
      if (typeof op.key !== "string")
        return Promise.reject(new TypeError(`MemoryStore.write: key must be a string`));
      if (op.type === "put" && typeof op.value !== "string")
        return Promise.reject(
          new TypeError(`MemoryStore.write: value of ${op.key} must be a string`),
        );
      if (op.type !== "put" && op.type !== "del")
        return Promise.reject(
          new TypeError(
            `MemoryStore.write: unknown op type ${String((op as { type: unknown }).type)}`,
          ),
        );
    }
    const pairs = this.readers > 0 ? this.pairs.slice() : this.pairs;
    for (const op of ops) {
      const i = lowerBound(pairs, op.key);
      const found = pairs[i]?.[0] === op.key;
      if (op.type === "put") {
        if (found) pairs[i] = [op.key, op.value];
        else pairs.splice(i, 0, [op.key, op.value]);
      } else if (found) pairs.splice(i, 1);
    }
    this.pairs = pairs;
    return Promise.resolve();
  }

  close(): Promise<void> {
    this.closed = true;
    return Promise.resolve();
  }
}

function closedError(): StorageClosed {
  return new StorageClosed("MemoryStore is closed");
}

/** Index of the first pair whose key is >= `key`. */
function lowerBound(pairs: readonly Pair[], key: string): number {
  let lo = 0;
  let hi = pairs.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((pairs[mid] as Pair)[0] < key) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
