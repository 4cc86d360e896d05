import { ioError } from "./level-errors.js";
import { errno, join, type SyncFs } from "./node-fs.js";

/** The files of a LevelDB directory, read for the checks before LevelDB opens it. */
export class DirectoryFiles {
  constructor(
    readonly fs: SyncFs,
    readonly location: string,
  ) {}

  path(name: string): string {
    return join(this.location, name);
  }

  /**
   * A file's bytes; `undefined` when it is gone: a live owner (which
   * LevelDB's lock will report) deleted it after a flush or compaction, or
   * it is missing and LevelDB itself refuses to open without it. Any other
   * failure is `StorageIOError` naming the file.
   */
  read(name: string, what: string): Uint8Array | undefined {
    try {
      return this.fs.readFileSync(this.path(name));
    } catch (error) {
      if (errno(error) === "ENOENT") return undefined;
      throw ioError(
        `${this.path(name)}: cannot read the ${what}: ${(error as Error).message}`,
        error,
        { file: this.path(name) },
      );
    }
  }
}
