import { frame, unframe } from "./framing.js";
import type { KeyValueOp, KeyValueStore, RangeOptions } from "./key-value-store.js";

/**
 * The store as `StoreStorage` sees it: puts are framed with a checksum,
 * every value read back is checked and unframed (a mismatch is
 * `StorageCorrupted` naming the key). `failed` hears every error the store
 * itself raised, so the storage can stop trusting itself after an I/O error.
 */
export class CheckedStore {
  constructor(
    readonly raw: KeyValueStore,
    private readonly failed: (error: unknown) => void = () => undefined,
  ) {}

  async get(key: string): Promise<string | undefined> {
    let raw: string | undefined;
    try {
      raw = await this.raw.get(key);
    } catch (error) {
      this.failed(error);
      throw error;
    }
    return raw === undefined ? undefined : unframe(key, raw);
  }

  /** The store's pairs with each value checked and unframed (a plain iterator: scans are hot). */
  range(options: RangeOptions): AsyncIterable<[string, string]> {
    return {
      [Symbol.asyncIterator]: () => {
        const pairs = this.raw.range(options)[Symbol.asyncIterator]();
        const check = (
          next: IteratorResult<[string, string]>,
        ): IteratorResult<[string, string]> => {
          if (next.done) return next;
          const [key, raw] = next.value;
          try {
            return { done: false, value: [key, unframe(key, raw)] };
          } catch (error) {
            // A loop whose next() rejects never calls return(): close the store's iterator here.
            pairs.return?.().catch(() => undefined);
            throw error;
          }
        };
        const failed = (error: unknown): never => {
          this.failed(error);
          throw error;
        };
        return {
          next: () => pairs.next().then(check, failed),
          return: async () => {
            await pairs.return?.();
            return { done: true, value: undefined };
          },
        };
      },
    };
  }

  /** Writes the ops with every put's payload framed. */
  async write(ops: readonly KeyValueOp[]): Promise<void> {
    const framed = ops.map((op): KeyValueOp =>
      op.type === "put" ? { type: "put", key: op.key, value: frame(op.key, op.value) } : op,
    );
    try {
      await this.raw.write(framed);
    } catch (error) {
      this.failed(error);
      throw error;
    }
  }
}
