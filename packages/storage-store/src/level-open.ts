import { StorageCorrupted } from "@durably/core";
import { DirectoryFiles } from "./directory-files.js";
import { readCurrent, readManifest } from "./level-current.js";
import { inspectLevelDirectory, type LevelDirectory } from "./level-directory.js";
import { ioError } from "./level-errors.js";
import { dropUnusedCopies, keepLogs, KEPT_FOLDER, releaseKept } from "./level-evidence.js";
import type { LiveLog } from "./level-logs.js";
import { claimDirectory, type OwnerClaim } from "./level-owners.js";
import { verifyReplay, type RecoveringDatabase } from "./level-recovery.js";
import { resetSigns, type ResetSign } from "./level-reset.js";
import { refuseLockedByOther } from "./level-lock-holder.js";
import { errno, join, nodeProcess, type SyncFs } from "./node-fs.js";

/**
 * How `levelStore` opens a database that can create itself on disk
 * (`supports.createIfMissing` and a string `location`: classic-level).
 *
 * The directory checks (`inspectLevelDirectory`) decide how LevelDB may
 * open it, so they must run right before the LevelDB open they decide, with
 * no other LevelDB open of the database running. abstract-level opens a new
 * database on its own, in a microtask after its constructor, with
 * `createIfMissing: true`, unless an `open` or `close` call comes first; a
 * caller may also have opened it. So the checks run inside abstract-level's
 * `opening` event of the open `levelStore` starts: the event fires right
 * before LevelDB opens, and only for an open that really opens. A check
 * that refuses throws from the event, which abstract-level turns into a
 * failed open without calling LevelDB: nothing on disk changes.
 *
 * When the event does not fire for it, the database opened by itself before
 * `levelStore` saw it (constructed, then something awaited before
 * `levelStore(db)`; or opened by its owner), unchecked and possibly with
 * `createIfMissing: true`. It is then used as it is, unless the directory
 * shows that this open started a new database over an earlier one
 * (`level-reset`): then the open fails with `StorageCorrupted` naming what
 * was found, and the database is closed.
 */

/** The database as this open uses it: abstract-level's open, close and `opening` event. */
export interface OpeningDatabase {
  readonly location?: string;
  readonly supports?: { readonly events?: Readonly<Record<string, boolean>> };
  open(options?: { createIfMissing?: boolean }): Promise<void>;
  close(): Promise<void>;
  on?(event: string, listener: () => void): unknown;
  off?(event: string, listener: () => void): unknown;
}

/** The checks found that `create` was the wrong guess (the directory changed meanwhile): open again. Never leaves this module. */
class WrongGuess extends Error {
  constructor(readonly create: boolean) {
    super(`the directory ${create ? "holds no" : "holds a"} database now`);
  }
}

export class CheckedOpen {
  /** What the checks found, once an open they decided has succeeded. */
  found: LevelDirectory | undefined;
  readonly opening: Promise<void>;
  /** This process's claim on the directory (`level-owners`), from right before LevelDB opens until the database closes. */
  private claim: OwnerClaim | undefined;

  constructor(
    private readonly db: OpeningDatabase,
    private readonly fs: SyncFs,
    private readonly location: string,
    private readonly checkTables: boolean,
    private readonly openError: (error: unknown, create: boolean | undefined) => unknown,
  ) {
    // Starts the open synchronously: it must come before the database's own deferred open.
    this.opening = this.run();
    // Reported by the store's open(); never an unhandled rejection if nobody opens the store.
    this.opening.catch(() => undefined);
  }

  /**
   * Removes the copies of the logs this open kept (`level-evidence`): called
   * once the store's own checks passed.
   */
  confirm(): void {
    const found = this.found;
    if (found === undefined) return;
    const names = new Set([
      ...found.live.filter((log) => log.records > 0).map((log) => log.name),
      ...found.kept.map((log) => log.name),
    ]);
    if (names.size > 0) releaseKept(this.fs, this.location, [...names]);
  }

  /** Ends this process's claim on the directory: called once the database is closed (or never opened). */
  release(): void {
    this.claim?.release();
    this.claim = undefined;
  }

  /**
   * What this open changed on disk, for an error that refuses the store
   * after LevelDB opened it (`StoreStorage.open`: a store of another format,
   * or not a Durably store): LevelDB rewrites files at every open.
   */
  openEffects(): string | undefined {
    const found = this.found;
    if (found === undefined || found.create) return undefined;
    const replayed = found.live.filter((log) => log.records > 0);
    const kept = [...new Set([...replayed, ...found.kept].map((log) => log.name))];
    return (
      `Nothing was written to the store, but LevelDB opened the directory before its keys could be read, and rewrote files ` +
      `as it does at every open: ` +
      (replayed.length > 0
        ? `it replayed the write-ahead log${replayed.length > 1 ? "s" : ""} ${replayed.map((log) => log.name).join(", ")} into a table file and deleted ${replayed.length > 1 ? "them" : "it"}, `
        : "") +
      `it wrote a new MANIFEST and a new log, pointed CURRENT at the new MANIFEST, and rotated its info log (LOG to LOG.old). ` +
      `The keys are intact (LevelDB serves them as before). ` +
      (kept.length > 0
        ? `A copy of ${kept.join(", ")} as it was before the open is kept in ${join(this.location, KEPT_FOLDER)}: keep it with the directory.`
        : "")
    ).trimEnd();
  }

  private async run(): Promise<void> {
    try {
      // The checks decide; this guess only spares a second open attempt when they agree.
      let create = !exists(this.fs, join(this.location, "CURRENT"));
      for (let attempt = 1; ; attempt++) {
        const outcome = await this.attempt(create);
        if (outcome === "opened") return this.owned();
        if (attempt === 3)
          throw ioError(
            `${this.location}: the directory kept changing while it was checked (CURRENT appeared or disappeared); nothing was opened`,
            undefined,
            { file: join(this.location, "CURRENT") },
          );
        create = outcome.create;
      }
    } catch (error) {
      // Every failed attempt left the database closed: the directory is free again in this process.
      this.release();
      throw error;
    }
  }

  /** The database is open: keep the claim until it closes, however it is closed. */
  private owned(): void {
    const claim = this.claim;
    if (claim === undefined) return;
    // An open that created the directory: its device and inode name it from now on too.
    claim.refresh();
    const { db } = this;
    if (typeof db.on !== "function" || typeof db.off !== "function") return;
    const off = db.off.bind(db);
    const onClosed = () => {
      off("closed", onClosed);
      if (this.claim === claim) this.release();
    };
    db.on("closed", onClosed);
  }

  private async attempt(guess: boolean): Promise<"opened" | WrongGuess> {
    const { db, fs, location } = this;
    let claimed = false;
    let refused: unknown;
    let made: LiveLog[] = [];
    let found: LevelDirectory | undefined;
    let create = guess;
    /** The checks, right before LevelDB opens; `exact`: the open's createIfMissing is already `guess`. */
    const check = (exact: boolean) => {
      claimed = true;
      try {
        // First: a second open in this process would make LevelDB drop the owner's lock (`level-owners`).
        this.claim ??= claimDirectory(location);
        // Then another process's: LevelDB would rotate the owner's info log before refusing.
        refuseLockedByOther(fs, location, nodeProcess()?.pid ?? 0);
        found = inspectLevelDirectory(location, { checkTables: this.checkTables });
        if (found === undefined) return;
        if (exact && found.create !== guess) throw new WrongGuess(found.create);
        create = found.create;
        // Before LevelDB replays the logs and deletes them: the evidence if it skips one.
        made = keepLogs(fs, location, found.live);
      } catch (error) {
        refused = error;
        throw error;
      }
    };
    let opened: Promise<void>;
    if (canHookOpening(db)) {
      const onOpening = () => check(true);
      db.on("opening", onOpening);
      opened = db.open({ createIfMissing: guess }).finally(() => db.off("opening", onOpening));
    } else {
      // No event to hook: check now and assume this open comes first, as abstract-level's deferred open allows.
      try {
        check(false);
      } catch (error) {
        db.close().catch(() => undefined);
        throw error;
      }
      opened = db.open({ createIfMissing: create });
    }
    try {
      await opened;
    } catch (error) {
      if (refused instanceof WrongGuess) return refused;
      // Refused by the checks, before LevelDB opened: nothing on disk changed.
      // eslint-disable-next-line @typescript-eslint/only-throw-error -- rethrown as the checks threw it
      if (refused !== undefined) throw refused;
      dropUnusedCopies(fs, location, made);
      throw this.openError(error, claimed ? create : undefined);
    }
    if (!claimed) {
      // Opened by itself, before the checks: too late to keep LevelDB from opening, but claim it for the opens after.
      try {
        this.claim ??= claimDirectory(location);
      } catch (error) {
        await db.close().catch(() => undefined);
        throw error;
      }
      await refuseOpenedReset(db, fs, location);
      return "opened";
    }
    const checked = found;
    if (checked !== undefined) {
      await verifyReplay(db as unknown as RecoveringDatabase, fs, location, checked).catch(
        async (error: unknown) => {
          await db.close().catch(() => undefined);
          throw error;
        },
      );
      this.found = checked;
    }
    return "opened";
  }
}

function canHookOpening(
  db: OpeningDatabase,
): db is OpeningDatabase & Required<Pick<OpeningDatabase, "on" | "off">> {
  return (
    typeof db.on === "function" &&
    typeof db.off === "function" &&
    db.supports?.events?.opening === true
  );
}

/**
 * For a database that opened without the checks (by itself, or a sublevel's
 * parent): fails with `StorageCorrupted`, and closes `db`, when the
 * directory at `location` shows that LevelDB started a new database over an
 * earlier one. Reads only.
 */
export async function refuseOpenedReset(
  db: { close(): Promise<void> },
  fs: SyncFs,
  location: string,
): Promise<void> {
  let signs: ResetSign[];
  try {
    signs = signsIn(fs, location);
  } catch (error) {
    await db.close().catch(() => undefined);
    throw error;
  }
  if (signs.length === 0) return;
  await db.close().catch(() => undefined);
  throw new StorageCorrupted(
    `${location}: LevelDB opened this directory by itself, before levelStore could check it (the database was constructed, ` +
      `then something was awaited before levelStore(db), or it was opened directly), and that open started a new, empty database ` +
      `over an earlier one: ${signs.map((s) => s.says).join("; ")}. LevelDB has deleted the earlier database's table and log files; ` +
      `nothing more was changed and the database was closed. Restore the directory from a backup. ` +
      `Open with openLevelStorage(location, ClassicLevel), or construct the database and pass it to levelStore in one synchronous step, ` +
      `so the directory is checked before LevelDB opens it.`,
    { file: (signs[0] as ResetSign).file },
  );
}

/** The reset signs of an open LevelDB directory; none when it cannot be told (no CURRENT or MANIFEST to compare). */
function signsIn(fs: SyncFs, location: string): ResetSign[] {
  let names: string[];
  try {
    names = fs.readdirSync(location, { withFileTypes: true }).map((e) => e.name);
  } catch (error) {
    throw ioError(`${location}: cannot list the directory: ${(error as Error).message}`, error, {
      file: location,
    });
  }
  const files = new DirectoryFiles(fs, location);
  const current = readCurrent(files, names);
  const manifest = current === undefined ? undefined : readManifest(files, current);
  if (current === undefined || manifest === undefined) return [];
  return resetSigns(files, names, current, manifest);
}

function exists(fs: SyncFs, path: string): boolean {
  try {
    fs.statSync(path);
    return true;
  } catch (error) {
    return errno(error) !== "ENOENT";
  }
}
