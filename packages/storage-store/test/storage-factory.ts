import {
  persistentStorageFactory,
  type PersistentFactoryOptions,
  type StorageFactory,
} from "@durably/contract-tests";
import { StoreStorage, type KeyValueStore } from "../src/index.js";
import type { Backend } from "./backends.js";

/**
 * The conformance suites' factory: a fresh StoreStorage per test over a
 * fresh store of `backend`. Persistent backends also pass `reopen`, which
 * closes the storage (LevelDB allows one owner at a time) and opens the same
 * data again through a new store handle.
 */
export function storeFactory(
  backend: Backend,
  options: PersistentFactoryOptions = {},
): StorageFactory {
  if (!backend.persistent)
    return async (use) => {
      const { store, cleanup } = backend.fresh();
      const storage = await StoreStorage.open(store);
      try {
        await use(storage);
      } finally {
        await storage.close();
        cleanup();
      }
    };
  return persistentStorageFactory(() => {
    const { store, reopen, cleanup } = backend.fresh();
    if (reopen === undefined) throw new Error(`${backend.name} is persistent but has no reopen()`);
    let first: KeyValueStore | undefined = store;
    return {
      open: () => {
        const handle = first ?? reopen();
        first = undefined;
        return StoreStorage.open(handle);
      },
      remove: cleanup,
    };
  }, options);
}
