import * as fs from "node:fs";
import { acquireLockFile } from "./lock-file.js";
import type { AppendFile, FileLock, FileSystem } from "./file-system.js";

function isMissing(error: unknown): boolean {
  return (error as NodeJS.ErrnoException | null)?.code === "ENOENT";
}

/**
 * Appends up to this size are written on the calling thread. A commit call
 * appends one short line to each document's file it touches, and a queued
 * `fs.write` costs the event loop more than the write(2) itself does (the
 * package README, "Appends"); longer appends (a large document) go to
 * libuv's pool so they do not hold the event loop.
 */
const SYNC_APPEND_LIMIT = 64 * 1024;

/** Writes all of `data` on this thread: write(2) may write fewer bytes than asked, so it keeps going. */
function writeNow(fd: number, data: Uint8Array): void {
  for (let offset = 0; offset < data.length;)
    offset += fs.writeSync(fd, data, offset, data.length - offset);
}

/** Writes all of `data` on libuv's pool, as `writeNow` does on this thread. */
function writePooled(fd: number, data: Uint8Array): Promise<void> {
  return new Promise((resolve, reject) => {
    let offset = 0;
    const step = (): void => {
      fs.write(fd, data, offset, data.length - offset, null, (error, written) => {
        if (error) return reject(error);
        offset += written;
        if (offset >= data.length) resolve();
        else step();
      });
    };
    step();
  });
}

function fsyncFd(fd: number): Promise<void> {
  return new Promise((resolve, reject) =>
    fs.fsync(fd, (error) => (error ? reject(error) : resolve())),
  );
}

/** Calls on a descriptor report no path: name the file, so the error says where. */
function named(error: unknown, path: string): unknown {
  const e = error as NodeJS.ErrnoException;
  if (e instanceof Error && typeof e.code === "string" && e.path === undefined) e.path = path;
  return error;
}

class NodeAppendFile implements AppendFile {
  private closed: Promise<void> | undefined;
  constructor(
    readonly path: string,
    private readonly fd: number,
  ) {}

  async append(data: Uint8Array): Promise<void> {
    try {
      // One promise per append, however it is written: a commit call makes one per touched file.
      if (data.length <= SYNC_APPEND_LIMIT) writeNow(this.fd, data);
      else await writePooled(this.fd, data);
    } catch (error) {
      throw named(error, this.path);
    }
  }

  flush(): Promise<void> {
    return fsyncFd(this.fd).catch((error: unknown) => {
      throw named(error, this.path);
    });
  }

  close(): Promise<void> {
    this.closed ??= new Promise((resolve, reject) =>
      fs.close(this.fd, (error) => (error ? reject(error) : resolve())),
    );
    return this.closed;
  }
}

/** The `FileSystem` port on `node:fs`: appends through `O_APPEND` descriptors, fsync on `flush`. */
export const nodeFileSystem: FileSystem = {
  async mkdir(path) {
    await fs.promises.mkdir(path, { recursive: true });
  },

  async list(directory) {
    return fs.promises.readdir(directory);
  },

  async stat(path) {
    try {
      const stats = await fs.promises.stat(path);
      return { size: stats.size };
    } catch (error) {
      if (isMissing(error)) return undefined;
      throw error;
    }
  },

  async read(path, range) {
    let handle: fs.promises.FileHandle;
    try {
      handle = await fs.promises.open(path, "r");
    } catch (error) {
      if (isMissing(error)) return undefined;
      throw error;
    }
    try {
      if (range === undefined) return await handle.readFile();
      // Sized to what the file holds: streaming asks for a whole chunk of files that are mostly small.
      const { size } = await handle.stat();
      const length = Math.max(0, Math.min(range.length, size - range.offset));
      const buffer = Buffer.allocUnsafe(length);
      let filled = 0;
      while (filled < length) {
        const { bytesRead } = await handle.read(
          buffer,
          filled,
          length - filled,
          range.offset + filled,
        );
        if (bytesRead === 0) break;
        filled += bytesRead;
      }
      return buffer.subarray(0, filled);
    } catch (error) {
      throw named(error, path);
    } finally {
      await handle.close();
    }
  },

  async openAppend(path) {
    const fd = await new Promise<number>((resolve, reject) =>
      fs.open(path, "a", 0o644, (error, fd) => (error ? reject(error) : resolve(fd))),
    );
    return new NodeAppendFile(path, fd);
  },

  async write(path, data) {
    await fs.promises.writeFile(path, data);
  },

  async flush(path) {
    let handle: fs.promises.FileHandle;
    try {
      handle = await fs.promises.open(path, "r");
    } catch (error) {
      // Windows cannot open a directory for fsync; its directory entries are durable without it.
      if (process.platform === "win32") return;
      throw error;
    }
    try {
      await handle.sync();
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (!(process.platform === "win32" && (code === "EPERM" || code === "EISDIR")))
        throw named(error, path);
    } finally {
      await handle.close();
    }
  },

  async rename(from, to) {
    await fs.promises.rename(from, to);
  },

  async remove(path) {
    await fs.promises.rm(path, { force: true });
  },

  async removeDirectory(path) {
    await fs.promises.rmdir(path);
  },

  async truncate(path, size) {
    await fs.promises.truncate(path, size);
  },

  lock(path): Promise<FileLock> {
    return acquireLockFile(path);
  },
};
