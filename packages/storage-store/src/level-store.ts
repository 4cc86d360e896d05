import { StorageCorrupted, StorageIOError } from "@durably/core";
import type { KeyValueOp, KeyValueStore, RangeOptions } from "./key-value-store.js";
import { translate, type Place } from "./level-errors.js";
import { CheckedOpen, refuseOpenedReset } from "./level-open.js";
import { nodeFs } from "./node-fs.js";

/**
 * The part of an `abstract-level` database (classic-level, memory-level,
 * browser-level, a sublevel...) that `levelStore` uses, declared here so the
 * package has no runtime dependency on abstract-level.
 */
export interface LevelDatabase {
  readonly status?: string;
  readonly location?: string;
  readonly supports?: {
    readonly permanence?: boolean;
    readonly createIfMissing?: boolean;
    readonly events?: Readonly<Record<string, boolean>>;
  };
  /** A sublevel's root database (abstract-level). */
  readonly db?: { readonly supports?: { readonly createIfMissing?: boolean } };
  open(options?: LevelOpenOptions): Promise<void>;
  close(): Promise<void>;
  get(key: string, options: LevelEncodings): Promise<string | undefined>;
  batch(
    operations: KeyValueOp[] | LevelBinaryOp[],
    options: LevelEncodings & { sync?: boolean },
  ): Promise<void>;
  /** abstract-level: the database's default encodings, asked with no argument. */
  keyEncoding?(): LevelEncoding;
  valueEncoding?(): LevelEncoding;
  iterator(options: LevelIteratorOptions): LevelIterator;
  /** abstract-level's events: `levelStore` runs its checks in `opening`, right before LevelDB opens. */
  on?(event: string, listener: () => void): unknown;
  off?(event: string, listener: () => void): unknown;
}

/** A write of raw bytes (`view` encodings): how commits a skipped log held are written again. */
export type LevelBinaryOp =
  { type: "put"; key: Uint8Array; value: Uint8Array } | { type: "del"; key: Uint8Array };

/** The abstract-level open options `levelStore` passes. */
export interface LevelOpenOptions {
  createIfMissing?: boolean;
}

/** An abstract-level encoding; `commonName` is "utf8" for utf8 whatever format the database stores it in. */
export interface LevelEncoding {
  readonly commonName?: string;
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
  /**
   * classic-level only: verify every block checksum of every live table file
   * before opening (LevelDB itself reads tables unchecked). Default true;
   * costs one read of the database's files per open (see the README).
   */
  checkTables?: boolean;
}

const UTF8: LevelEncodings = { keyEncoding: "utf8", valueEncoding: "utf8" };

/**
 * The encoding options reads, ranges and writes pass: none (`{}`) when the
 * database's own defaults are utf8 already (classic-level's, memory-level's
 * and browser-level's are), `UTF8` otherwise. abstract-level copies a `batch`
 * call's options into every operation and encodes each one by name when
 * they are given; a 64-commit write passing utf8 spent about three times the
 * CPU of the same write without them (apps/bench, `storage.commit` direct).
 */
export function encodingOptions(db: LevelDatabase): LevelEncodings {
  const defaults =
    db.keyEncoding?.().commonName === "utf8" && db.valueEncoding?.().commonName === "utf8";
  return defaults ? {} : UTF8;
}

/**
 * Adapts an `abstract-level` database, open or not, to the `KeyValueStore`
 * port. Its `close()` closes the database.
 *
 * A database that can create itself on disk (`supports.createIfMissing`,
 * with a `location`: classic-level) is opened right here, with
 * `createIfMissing` only when the directory holds no database, after the
 * checks of `inspectLevelDirectory`, run right before LevelDB opens (see
 * `level-open`): a directory with files but no `CURRENT`, a damaged
 * `CURRENT`, MANIFEST, log or table, or signs of an earlier reset are
 * refused and left untouched. Once LevelDB has opened, the newest commit its
 * logs held must be there (see `verifyReplay`): LevelDB goes on without a
 * log it fails to open. A database that opened by itself before (an `await`
 * between its constructor and this call) is used unchecked, unless its open
 * reset the directory (`StorageCorrupted`). `openLevelStorage` constructs the
 * database itself, so that cannot happen.
 */
export function levelStore(db: LevelDatabase, options: LevelStoreOptions = {}): LevelStore {
  return new LevelStore(db, options);
}

export class LevelStore implements KeyValueStore {
  readonly persistent: boolean;
  private readonly encodings: LevelEncodings;
  private readonly batchOptions: LevelEncodings & { sync?: boolean };
  /** The checked open started by the constructor, for a database that can create itself on disk. */
  private readonly checked: CheckedOpen | undefined;

  constructor(
    readonly db: LevelDatabase,
    options: LevelStoreOptions = {},
  ) {
    this.persistent = options.persistent ?? db.supports?.permanence === true;
    this.encodings = encodingOptions(db);
    this.batchOptions = options.sync ? { ...this.encodings, sync: true } : this.encodings;
    this.checked = this.startCheckedOpen(options.checkTables !== false);
  }

  private get place(): Place {
    return { location: this.db.location };
  }

  /**
   * Starts the open of a database that can create itself on disk
   * (classic-level), synchronously: it must come before the database's own
   * deferred open, which would run with `createIfMissing: true`. See
   * `level-open`.
   */
  private startCheckedOpen(checkTables: boolean): CheckedOpen | undefined {
    const { db } = this;
    if (db.supports?.createIfMissing !== true) return undefined;
    const location = db.location;
    const fs = nodeFs();
    if (typeof location !== "string" || fs === undefined) return undefined;
    return new CheckedOpen(db, fs, location, checkTables, (error, create) =>
      this.openError(error, create),
    );
  }

  /** Opens the database unless it is open; a database another process holds gives `StorageLocked`. */
  async open(): Promise<void> {
    if (this.checked !== undefined) return this.checked.opening;
    if (this.db.status !== "open")
      try {
        await this.db.open();
      } catch (error) {
        throw this.openError(error, undefined);
      }
    // A sublevel: its parent opened itself, unchecked; at least refuse a directory it reset.
    const parent = parentOnDisk(this.db);
    const fs = nodeFs();
    if (parent !== undefined && fs !== undefined) await refuseOpenedReset(this.db, fs, parent);
  }

  /**
   * Called by `StoreStorage.open` once the store passed its checks (the
   * commit chain): the copies of the write-ahead logs kept for this open
   * hold nothing the store lacks now, and are removed.
   */
  confirmOpen(): Promise<void> {
    this.checked?.confirm();
    return Promise.resolve();
  }

  private openError(error: unknown, create: boolean | undefined): unknown {
    const translated = translate(error, "open", this.place, "open");
    if (translated instanceof StorageIOError && /No space left on device/.test(messages(error)))
      // LevelDB writes at every open, even of a cleanly closed store: say so, the error alone reads like damage.
      return new StorageIOError(
        `${translated.message}. ENOSPC: the file system holding ${this.db.location} is full, and LevelDB writes at every open ` +
          `(a new MANIFEST and log, and a table of the commits in its logs), even of a cleanly closed store. ` +
          `The open failed before LevelDB replaced or deleted any file holding data, so nothing was lost: free some space and open again.`,
        translated.location,
        { cause: error },
      );
    if (translated !== error || create !== false) return translated;
    // Opened without createIfMissing because CURRENT was there; LevelDB found none after all.
    if (/does not exist/.test(messages(error)))
      return new StorageCorrupted(
        `${this.db.location}: LevelDB finds no database there (no CURRENT file), although the directory had one when it was checked; nothing was created`,
        { file: `${this.db.location}/CURRENT` },
        { cause: error },
      );
    return error;
  }

  async get(key: string): Promise<string | undefined> {
    try {
      return await this.db.get(key, this.encodings);
    } catch (error) {
      throw translate(error, "a read", { ...this.place, key }, "read");
    }
  }

  async *range(options: RangeOptions): AsyncGenerator<[string, string]> {
    const iteratorOptions: LevelIteratorOptions = { ...this.encodings };
    if (options.gte !== undefined) iteratorOptions.gte = options.gte;
    if (options.lt !== undefined) iteratorOptions.lt = options.lt;
    if (options.reverse) iteratorOptions.reverse = true;
    if (options.limit !== undefined) iteratorOptions.limit = options.limit;
    const place = { ...this.place, range: describeRange(options) };
    let iterator: LevelIterator;
    try {
      iterator = this.db.iterator(iteratorOptions);
    } catch (error) {
      throw translate(error, "a range read", place, "read");
    }
    // Small first chunk (most reads are short pages), growing for long scans.
    let size = Math.min(options.limit ?? 32, 32);
    try {
      for (;;) {
        let chunk: [string, string][];
        try {
          chunk = await iterator.nextv(size);
        } catch (error) {
          throw translate(error, "a range read", place, "read");
        }
        if (chunk.length === 0) return;
        for (const pair of chunk) yield pair;
        size = Math.min(size * 2, 1024);
      }
    } finally {
      await iterator.close();
    }
  }

  async write(ops: readonly KeyValueOp[]): Promise<void> {
    try {
      await this.db.batch(ops as KeyValueOp[], this.batchOptions);
    } catch (error) {
      throw translate(error, `a write of ${ops.length} key(s)`, this.place, "write");
    }
  }

  /**
   * Called by `StoreStorage.open` when it refuses the store after it opened
   * (another format, not a Durably store): what the open changed on disk, as
   * a sentence for the error, or `undefined` when it changed nothing.
   */
  openEffects(): string | undefined {
    return this.checked?.openEffects();
  }

  async close(): Promise<void> {
    try {
      await this.db.close();
    } catch (error) {
      throw translate(error, "close", this.place, "close");
    }
    // Closed: another open of the directory in this process may go ahead (see `level-owners`).
    this.checked?.release();
  }
}

/** The directory of a sublevel's root database, when it is on disk (classic-level). */
function parentOnDisk(db: LevelDatabase): string | undefined {
  const root = db.db;
  if (root === undefined || root === (db as object) || root.supports?.createIfMissing !== true)
    return undefined;
  const location = (root as { location?: unknown }).location;
  return typeof location === "string" ? location : undefined;
}

function describeRange(options: RangeOptions): string {
  return `keys from ${options.gte ?? "the first"} to before ${options.lt ?? "the last"}`;
}

function messages(error: unknown): string {
  const out: string[] = [];
  for (let e = error, depth = 0; e instanceof Error && depth < 8; depth++) {
    out.push(e.message);
    e = e.cause;
  }
  return out.join(" / ");
}
