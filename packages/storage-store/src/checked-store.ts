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

  async *range(options: RangeOptions): AsyncGenerator<[string, string]> {
    const pairs = this.raw.range(options)[Symbol.asyncIterator]();
    try {
      for (;;) {
        let next: IteratorResult<[string, string]>;
        try {
          next = await pairs.next();
        } catch (error) {
          this.failed(error);
          throw error;
        }
        if (next.done) return;
        const [key, raw] = next.value;
        yield [key, unframe(key, raw)];
      }
    } finally {
      await pairs.return?.();
    }
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
