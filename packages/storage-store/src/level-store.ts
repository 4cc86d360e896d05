import { StorageCorrupted } from "@durably/core";
import type { KeyValueOp, KeyValueStore, RangeOptions } from "./key-value-store.js";
import { inspectLevelDirectory, type LevelDirectory } from "./level-directory.js";
import { translate, type Place } from "./level-errors.js";
import { dropUnusedCopies, keepLogs, releaseKept } from "./level-evidence.js";
import type { LiveLog } from "./level-logs.js";
import { verifyReplay, type RecoveringDatabase } from "./level-recovery.js";
import { nodeFs, type SyncFs } from "./node-fs.js";

/**
 * The part of an `abstract-level` database (classic-level, memory-level,
 * browser-level, a sublevel...) that `levelStore` uses, declared here so the
 * package has no runtime dependency on abstract-level.
 */
export interface LevelDatabase {
  readonly status?: string;
  readonly location?: string;
  readonly supports?: { readonly permanence?: boolean; readonly createIfMissing?: boolean };
  open(options?: LevelOpenOptions): Promise<void>;
  close(): Promise<void>;
  get(key: string, options: LevelEncodings): Promise<string | undefined>;
  batch(
    operations: KeyValueOp[] | LevelBinaryOp[],
    options: LevelEncodings & { sync?: boolean },
  ): Promise<void>;
  iterator(options: LevelIteratorOptions): LevelIterator;
}

/** A write of raw bytes (`view` encodings): how commits a skipped log held are written again. */
export type LevelBinaryOp =
  { type: "put"; key: Uint8Array; value: Uint8Array } | { type: "del"; key: Uint8Array };

/** The abstract-level open options `levelStore` passes. */
export interface LevelOpenOptions {
  createIfMissing?: boolean;
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
 * Adapts an `abstract-level` database, open or not, to the `KeyValueStore`
 * port. Its `close()` closes the database.
 *
 * A database that is not open yet and can create itself on disk
 * (`supports.createIfMissing`, with a `location`: classic-level) is opened
 * right here, before its own deferred open would run with
 * `createIfMissing: true`: after a look at the directory, with
 * `createIfMissing` only when it holds no database (see
 * `inspectLevelDirectory`). A directory that holds files but no `CURRENT`,
 * or a damaged write-ahead log, is refused and left untouched. Once LevelDB
 * has opened, the newest commit its logs held must be there (see
 * `verifyReplay`): LevelDB goes on without a log it fails to open.
 */
export function levelStore(db: LevelDatabase, options: LevelStoreOptions = {}): LevelStore {
  return new LevelStore(db, options);
}

export class LevelStore implements KeyValueStore {
  readonly persistent: boolean;
  private readonly batchOptions: LevelEncodings & { sync?: boolean };
  /** The open started by the constructor, if it started one; `open()` awaits it. */
  private readonly opening: Promise<void> | undefined;
  /** What the directory held before the open, when it was checked: the logs, and copies kept aside. */
  private readonly directory: { fs: SyncFs; location: string; found: LevelDirectory } | undefined;

  constructor(
    readonly db: LevelDatabase,
    options: LevelStoreOptions = {},
  ) {
    this.persistent = options.persistent ?? db.supports?.permanence === true;
    this.batchOptions = options.sync ? { ...UTF8, sync: true } : UTF8;
    const claimed = this.claimOpen(options.checkTables !== false);
    this.opening = claimed?.opening;
    this.directory = claimed?.directory;
    // Reported by open(); never an unhandled rejection if nobody opens the store.
    this.opening?.catch(() => undefined);
  }

  private get place(): Place {
    return { location: this.db.location };
  }

  /**
   * Decides how to open a database that could create itself, synchronously:
   * abstract-level opens a new database on its own in a microtask after its
   * constructor, with the constructor's options, unless an `open` or `close`
   * call comes first.
   */
  private claimOpen(checkTables: boolean):
    | {
        opening: Promise<void>;
        directory?: { fs: SyncFs; location: string; found: LevelDirectory };
      }
    | undefined {
    const { db } = this;
    if (db.status === "open" || db.supports?.createIfMissing !== true) return undefined;
    const location = db.location;
    const fs = nodeFs();
    if (typeof location !== "string" || fs === undefined) return undefined;
    let found: LevelDirectory | undefined;
    let made: LiveLog[] = [];
    try {
      found = inspectLevelDirectory(location, { checkTables });
      // Before LevelDB replays the logs and deletes them: the evidence if it skips one.
      if (found !== undefined) made = keepLogs(fs, location, found.live);
    } catch (error) {
      // Refused: close before the deferred open can run, so nothing on disk is touched.
      db.close().catch(() => undefined);
      // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- rethrown as thrown by the check
      return { opening: Promise.reject(error) };
    }
    if (found === undefined) return undefined;
    const directory = { fs, location, found };
    const opening = db.open({ createIfMissing: found.create }).then(
      () =>
        verifyReplay(db as unknown as RecoveringDatabase, fs, location, found).catch(
          async (error: unknown) => {
            await db.close().catch(() => undefined);
            throw error;
          },
        ),
      (error: unknown) => {
        dropUnusedCopies(fs, location, made);
        throw this.openError(error, found.create);
      },
    );
    return { opening, directory };
  }

  /** Opens the database unless it is open; a database another process holds gives `StorageLocked`. */
  async open(): Promise<void> {
    if (this.opening !== undefined) return this.opening;
    if (this.db.status === "open") return;
    try {
      await this.db.open();
    } catch (error) {
      throw this.openError(error, undefined);
    }
  }

  /**
   * Called by `StoreStorage.open` once the store passed its checks (the
   * commit chain): the copies of the write-ahead logs kept for this open
   * hold nothing the store lacks now, and are removed.
   */
  confirmOpen(): Promise<void> {
    const directory = this.directory;
    if (directory === undefined) return Promise.resolve();
    const { fs, location, found } = directory;
    const names = new Set([
      ...found.live.filter((log) => log.records > 0).map((log) => log.name),
      ...found.kept.map((log) => log.name),
    ]);
    if (names.size > 0) releaseKept(fs, location, [...names]);
    return Promise.resolve();
  }

  private openError(error: unknown, create: boolean | undefined): unknown {
    const translated = translate(error, "open", this.place, "open");
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
      return await this.db.get(key, UTF8);
    } catch (error) {
      throw translate(error, "a read", { ...this.place, key }, "read");
    }
  }

  async *range(options: RangeOptions): AsyncGenerator<[string, string]> {
    const iteratorOptions: LevelIteratorOptions = { ...UTF8 };
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

  async close(): Promise<void> {
    try {
      await this.db.close();
    } catch (error) {
      throw translate(error, "close", this.place, "close");
    }
  }
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
