import { CheckedStorage } from "@durably/core/storage";
import type { KeyValueStore } from "./key-value-store.js";
import { readStoredState, STORE_FORMAT } from "./open-state.js";
import { StoreBackend, type StoreBackendOptions } from "./store-backend.js";

export { STORE_FORMAT };

export type StoreStorageOptions = StoreBackendOptions;

/**
 * The Storage contract on any ordered, transactional `KeyValueStore` (see
 * the package README, "How a commit is stored"): core's checked front over
 * `StoreBackend`. One `commit` call is one atomic `store.write`; every
 * refusal is decided before it, so a refused batch never reaches the store.
 * Every value goes through `CheckedStore`: framed with a checksum on write,
 * checked on read.
 */
export class StoreStorage extends CheckedStorage {
  /** The store this storage owns (closed by `close()`). */
  readonly store: KeyValueStore;

  private constructor(backend: StoreBackend) {
    super(backend);
    this.store = backend.store;
  }

  /**
   * Opens the store (if it has an `open`), reads the counters, verifies the
   * commit chain written since the last verified open, tells the store
   * (`confirmOpen`), and is ready. The storage owns the store from now on.
   */
  static async open(
    store: KeyValueStore,
    options: StoreStorageOptions = {},
  ): Promise<StoreStorage> {
    try {
      await store.open?.();
      const { counters, formatWritten } = await readStoredState(store);
      await store.confirmOpen?.();
      return new StoreStorage(new StoreBackend(store, counters, formatWritten, options));
    } catch (error) {
      await store.close().catch(() => undefined);
      throw error;
    }
  }
}
