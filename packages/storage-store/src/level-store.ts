import { StorageLocked } from "@durably/core";
import type { KeyValueOp, KeyValueStore, RangeOptions } from "./key-value-store.js";

/**
 * The part of an `abstract-level` database (classic-level, memory-level,
 * browser-level, a sublevel...) that `levelStore` uses, declared here so the
 * package has no runtime dependency on abstract-level.
 */
export interface LevelDatabase {
  readonly status?: string;
  readonly location?: string;
  readonly supports?: { readonly permanence?: boolean };
  open(): Promise<void>;
  close(): Promise<void>;
  get(key: string, options: LevelEncodings): Promise<string | undefined>;
  batch(operations: KeyValueOp[], options: LevelEncodings & { sync?: boolean }): Promise<void>;
  iterator(options: LevelIteratorOptions): LevelIterator;
}

export interface LevelEncodings {
  keyEncoding?: string;
  valueEncoding?: string;
}

export interface LevelIteratorOptions extends LevelEncodings {
  gte?: string;
  lt?: string;
  reverse?: boolean;
  limit?: number;
}

export interface LevelIterator {
  nextv(size: number): Promise<[string, string][]>;
  close(): Promise<void>;
}

export interface LevelStoreOptions {
  /**
   * Ask the database to sync each write to disk (classic-level `sync: true`):
   * survives power loss, slower. Default false: every acknowledged write
   * survives a process crash (it is in the OS before `write` resolves).
   */
  sync?: boolean;
  /** Overrides the database's own `supports.permanence`. */
  persistent?: boolean;
}

const UTF8: LevelEncodings = { keyEncoding: "utf8", valueEncoding: "utf8" };

/** Adapts an `abstract-level` database, open or not, to the `KeyValueStore` port. Its `close()` closes the database. */
export function levelStore(db: LevelDatabase, options: LevelStoreOptions = {}): LevelStore {
  return new LevelStore(db, options);
}

export class LevelStore implements KeyValueStore {
  readonly persistent: boolean;
  private readonly batchOptions: LevelEncodings & { sync?: boolean };

  constructor(
    readonly db: LevelDatabase,
    options: LevelStoreOptions = {},
  ) {
    this.persistent = options.persistent ?? db.supports?.permanence === true;
    this.batchOptions = options.sync ? { ...UTF8, sync: true } : UTF8;
  }

  /** Opens the database unless it is open; a database another process holds gives `StorageLocked`. */
  async open(): Promise<void> {
    if (this.db.status === "open") return;
    try {
      await this.db.open();
    } catch (error) {
      if (hasCode(error, "LEVEL_LOCKED")) {
        const where = this.db.location ?? "the database";
        throw new StorageLocked(`${where} is locked: another process (or instance) has it open`, {
          cause: error,
        });
      }
      throw error;
    }
  }

  get(key: string): Promise<string | undefined> {
    return this.db.get(key, UTF8);
  }

  async *range(options: RangeOptions): AsyncGenerator<[string, string]> {
    const iteratorOptions: LevelIteratorOptions = { ...UTF8 };
    if (options.gte !== undefined) iteratorOptions.gte = options.gte;
    if (options.lt !== undefined) iteratorOptions.lt = options.lt;
    if (options.reverse) iteratorOptions.reverse = true;
    if (options.limit !== undefined) iteratorOptions.limit = options.limit;
    const iterator = this.db.iterator(iteratorOptions);
    // Small first chunk (most reads are short pages), growing for long scans.
    let size = Math.min(options.limit ?? 32, 32);
    try {
      for (;;) {
        const chunk = await iterator.nextv(size);
        if (chunk.length === 0) return;
        for (const pair of chunk) yield pair;
        size = Math.min(size * 2, 1024);
      }
    } finally {
      await iterator.close();
    }
  }

  write(ops: readonly KeyValueOp[]): Promise<void> {
    return this.db.batch(ops as KeyValueOp[], this.batchOptions);
  }

  close(): Promise<void> {
    return this.db.close();
  }
}

function hasCode(error: unknown, code: string): boolean {
  for (let e = error, depth = 0; e !== undefined && e !== null && depth < 8; depth++) {
    if ((e as { code?: unknown }).code === code) return true;
    e = (e as { cause?: unknown }).cause;
  }
  return false;
}
