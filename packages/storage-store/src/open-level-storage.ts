import { levelStore, type LevelDatabase, type LevelStoreOptions } from "./level-store.js";
import { StoreStorage, type StoreStorageOptions } from "./store-storage.js";

/**
 * A database class that takes a location: classic-level's `ClassicLevel`
 * (or browser-level's `BrowserLevel`). Passed in, so the package keeps no
 * runtime dependency on either.
 */
export type LevelConstructor = new (
  location: string,
  options?: { createIfMissing?: boolean },
) => LevelDatabase;

export type OpenLevelStorageOptions = LevelStoreOptions & StoreStorageOptions;

/**
 * Opens the Durably store at `location`, constructing the database itself:
 * `await openLevelStorage("./durably-db", ClassicLevel)`.
 *
 * The database is constructed and handed to `levelStore` in one synchronous
 * step, so the directory checks always run before LevelDB opens it (a
 * database constructed by the caller opens itself, with `createIfMissing`,
 * as soon as the caller awaits anything before `levelStore`). It is also
 * constructed with `createIfMissing: false`, so no open but the checked one
 * can create a database. The storage owns the database: `close()` closes it.
 */
export function openLevelStorage(
  location: string,
  Level: LevelConstructor,
  options: OpenLevelStorageOptions = {},
): Promise<StoreStorage> {
  // Each takes its own options from the one object.
  const store = levelStore(new Level(location, { createIfMissing: false }), options);
  return StoreStorage.open(store, options);
}
