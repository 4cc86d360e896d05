export type { KeyValueOp, KeyValueStore, RangeOptions } from "./key-value-store.js";
export { StoreStorage, STORE_FORMAT, type StoreStorageOptions } from "./store-storage.js";
export { MemoryStore } from "./memory-store.js";
export {
  levelStore,
  LevelStore,
  type LevelDatabase,
  type LevelEncodings,
  type LevelIterator,
  type LevelIteratorOptions,
  type LevelStoreOptions,
} from "./level-store.js";
export {
  openLevelStorage,
  type LevelConstructor,
  type OpenLevelStorageOptions,
} from "./open-level-storage.js";
export { dumpKeys, keyRanges, type KeyRangeSummary, type StoredPair } from "./dump-keys.js";
export { KEY_RANGES } from "./keys.js";
