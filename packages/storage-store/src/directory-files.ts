import { ioError } from "./level-errors.js";
import { errno, join, type SyncFs } from "./node-fs.js";

/** The files of a LevelDB directory, read for the checks before LevelDB opens it. */
export class DirectoryFiles {
  /** Reused by `readTransient`: the table checks read megabytes, one file after another. */
  private scratch = new Uint8Array(0);

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

  /**
   * Like `read`, into a buffer reused by the next call: for a check that
   * keeps nothing of the bytes once it returns.
   */
  readTransient(name: string, what: string): Uint8Array | undefined {
    const path = this.path(name);
    const failed = (error: unknown) =>
      ioError(`${path}: cannot read the ${what}: ${(error as Error).message}`, error, {
        file: path,
      });
    let fd: number;
    try {
      fd = this.fs.openSync(path, "r");
    } catch (error) {
      if (errno(error) === "ENOENT") return undefined;
      throw failed(error);
    }
    try {
      const size = this.fs.fstatSync(fd).size;
      if (this.scratch.length < size)
        this.scratch = new Uint8Array(Math.max(size, 2 * this.scratch.length));
      let done = 0;
      while (done < size) {
        const n = this.fs.readSync(fd, this.scratch, done, size - done, done);
        if (n === 0) break;
        done += n;
      }
      return this.scratch.subarray(0, done);
    } catch (error) {
      throw failed(error);
    } finally {
      try {
        this.fs.closeSync(fd);
      } catch {
        // A read-only descriptor: nothing was written that a failed close could lose.
      }
    }
  }
}
