import { StorageCorrupted } from "@durably/core";
import type { FileSystem } from "./file-system.js";
import { READ_CHUNK } from "./line-reader.js";

/** The directory, inside the storage directory, that keeps what recovery cuts. */
export const RECOVERED_DIR = "recovered";

/**
 * Keeps what recovery takes out of the storage's files, so open never
 * deletes data: a cut tail is copied (and, with fsync, made durable) before
 * its file is truncated, and a whole file is renamed into `recovered/`.
 * Names are `recovered/<time of this open>-<file>` (with `-<n>` added when
 * one is taken), so repeated recoveries never overwrite each other.
 */
export class SetAside {
  private taken: Set<string> | undefined;
  private readonly stamp: string;

  constructor(
    private readonly fs: FileSystem,
    private readonly directory: string,
    private readonly fsync: boolean,
    now = new Date(),
    /** The storage directory, which keeps `recovered/` (when `directory` is a generation inside it). */
    private readonly root = directory,
  ) {
    this.stamp = now.toISOString().replace(/[:]/g, "-");
  }

  private get folder(): string {
    return `${this.root}/${RECOVERED_DIR}`;
  }

  /** A free name in `recovered/` for `file`, relative to the storage directory. */
  private async name(file: string): Promise<string> {
    if (this.taken === undefined) {
      await this.fs.mkdir(this.folder);
      // The folder's own entry, when it is new, must be durable before anything relies on it.
      if (this.fsync) await this.fs.flush(this.root);
      this.taken = new Set(await this.fs.list(this.folder));
    }
    let name = `${this.stamp}-${file}`;
    for (let n = 2; this.taken.has(name); n++) name = `${this.stamp}-${n}-${file}`;
    this.taken.add(name);
    return `${RECOVERED_DIR}/${name}`;
  }

  /**
   * Copies bytes `from`..`to` of `file` into a new file in `recovered/`
   * (a chunk at a time), flushed with fsync; returns its relative path. The
   * caller truncates only after this resolves.
   */
  async copyTail(file: string, from: number, to: number): Promise<string> {
    const saved = await this.name(file);
    const out = await this.fs.openAppend(`${this.root}/${saved}`);
    try {
      for (let at = from; at < to;) {
        const bytes = await this.fs.read(`${this.directory}/${file}`, {
          offset: at,
          length: Math.min(READ_CHUNK, to - at),
        });
        if (bytes === undefined || bytes.length === 0)
          throw new StorageCorrupted(
            `${file} ended at byte ${at} while its tail up to byte ${to} was being set aside`,
            { file },
          );
        await out.append(bytes);
        at += bytes.length;
      }
      if (this.fsync) await out.flush();
    } finally {
      await out.close();
    }
    if (this.fsync) await this.fs.flush(this.folder);
    return saved;
  }

  /** Moves `name` from directory `from` into `recovered/` as `as` (one rename); returns its new relative path. */
  async moveFrom(from: string, name: string, as: string): Promise<string> {
    const saved = await this.name(as);
    await this.fs.rename(`${from}/${name}`, `${this.root}/${saved}`);
    if (this.fsync) await this.fs.flush(this.folder);
    return saved;
  }

  /** Moves `file` into `recovered/` (one rename); returns its new relative path. */
  async moveFile(file: string): Promise<string> {
    const saved = await this.name(file);
    await this.fs.rename(`${this.directory}/${file}`, `${this.root}/${saved}`);
    if (this.fsync) {
      await this.fs.flush(this.folder);
      await this.fs.flush(this.directory);
    }
    return saved;
  }
}
