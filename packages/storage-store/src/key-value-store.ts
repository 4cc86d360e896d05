/** One operation of an atomic `KeyValueStore.write`. */
export type KeyValueOp = { type: "put"; key: string; value: string } | { type: "del"; key: string };

/** Bounds of an ordered range read; keys compare as strings (byte order of their UTF-8 for ASCII keys). */
export interface RangeOptions {
  /** Inclusive lower bound. */
  gte?: string;
  /** Exclusive upper bound. */
  lt?: string;
  /** Largest key first. */
  reverse?: boolean;
  /** At most this many pairs. */
  limit?: number;
}

/**
 * The port `StoreStorage` runs on: an ordered, transactional
 * key-value store. Every key `StoreStorage` writes is ASCII, so string order
 * and byte order agree on every implementation.
 */
export interface KeyValueStore {
  /** True when the data survives closing and reopening the store. */
  readonly persistent?: boolean;
  /** Opens the underlying database if it is not open yet; called once by `StoreStorage.open`. */
  open?(): Promise<void>;
  /**
   * Called once by `StoreStorage.open` after the store's contents passed its
   * open checks (format, counters, commit chain): a store may then drop what
   * it kept in case they failed (`levelStore`: copies of LevelDB's logs).
   */
  confirmOpen?(): Promise<void>;
  /**
   * What opening the store changed on disk, as a sentence, when it changed
   * anything: added by `StoreStorage.open` to an error that refuses the
   * store's contents (another format, not a Durably store), so the error
   * does not claim nothing changed (`levelStore`: LevelDB rewrites files at
   * every open).
   */
  openEffects?(): string | undefined;
  get(key: string): Promise<string | undefined>;
  /** Pairs in key order (or reverse) within the bounds; a consistent snapshot for the whole iteration. */
  range(options: RangeOptions): AsyncIterable<[string, string]>;
  /** Applies every op or none of them. */
  write(ops: readonly KeyValueOp[]): Promise<void>;
  close(): Promise<void>;
}
