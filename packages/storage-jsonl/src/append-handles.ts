import type { AppendFile, FileSystem } from "./file-system.js";

/**
 * Open append handles to sidecar files, least recently used first. A commit
 * pins the handles it uses; between commits the cache is trimmed to
 * `limit`, so thousands of documents never exhaust file descriptors.
 */
export class AppendHandles {
  private readonly open = new Map<string, AppendFile>();

  constructor(
    private readonly fs: FileSystem,
    private readonly directory: string,
    private readonly limit: number,
  ) {}

  /** The open handle for `file`, marked most recently used, or `undefined` when it is not open. */
  cached(file: string): AppendFile | undefined {
    const handle = this.open.get(file);
    if (handle !== undefined) {
      // Re-insert: Map order is the recency order.
      this.open.delete(file);
      this.open.set(file, handle);
    }
    return handle;
  }

  /** The handle for `file`, opening (and creating) the file when needed. */
  async get(file: string): Promise<AppendFile> {
    const handle = this.cached(file);
    if (handle !== undefined) return handle;
    const opened = await this.fs.openAppend(`${this.directory}/${file}`);
    this.open.set(file, opened);
    return opened;
  }

  /** Closes the handle of `file` (before it is renamed over or removed). */
  async drop(file: string): Promise<void> {
    const handle = this.open.get(file);
    if (handle === undefined) return;
    this.open.delete(file);
    await handle.close();
  }

  /** Closes the least recently used handles beyond the limit. */
  async trim(): Promise<void> {
    while (this.open.size > this.limit) {
      const [file] = this.open.keys();
      if (file === undefined) return;
      await this.drop(file);
    }
  }

  async closeAll(): Promise<void> {
    const handles = [...this.open.values()];
    this.open.clear();
    const results = await Promise.allSettled(handles.map((h) => h.close()));
    const failed = results.find((r) => r.status === "rejected");
    if (failed) throw failed.reason;
  }
}
