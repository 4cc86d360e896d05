import { basename } from "node:path";
import {
  nodeFileSystem,
  type AppendFile,
  type FileLock,
  type FileSystem,
} from "../../src/index.js";

export type FaultMode = "before" | "after" | "half";

/** The error an armed fault throws. */
export class InjectedFault extends Error {
  constructor(readonly op: string) {
    super(`injected fault: ${op}`);
    this.name = "InjectedFault";
  }
}

/**
 * The real node file system, with one armed fault: once counting starts,
 * every file operation gets an index, and the operation at the armed index
 * fails before doing anything, after doing it, or (append, write) after
 * writing only the first half of its bytes. Records what it saw in `log`.
 */
export class FaultyFileSystem implements FileSystem {
  readonly log: string[] = [];
  private counting = false;
  private next = 0;
  private armed: { at: number; mode: FaultMode } | undefined;
  fired: string | undefined;

  constructor(private readonly inner: FileSystem = nodeFileSystem) {}

  /** Starts numbering operations from 0 (and recording them), failing the one at `at` if given. */
  count(fault?: { at: number; mode: FaultMode }): void {
    this.counting = true;
    this.next = 0;
    this.log.length = 0;
    this.armed = fault;
  }

  /** Stops numbering; later operations pass through untouched. */
  stop(): void {
    this.counting = false;
    this.armed = undefined;
  }

  private async op<T>(
    name: string,
    path: string,
    run: () => Promise<T>,
    half?: () => Promise<void>,
  ): Promise<T> {
    if (!this.counting) return run();
    const index = this.next++;
    const label = `${name} ${basename(path)}`;
    this.log.push(label);
    const armed = this.armed;
    if (armed === undefined || armed.at !== index) return run();
    this.fired = `${label} (${armed.mode})`;
    if (armed.mode === "before") throw new InjectedFault(this.fired);
    if (armed.mode === "half" && half !== undefined) await half();
    else await run();
    throw new InjectedFault(this.fired);
  }

  mkdir(path: string) {
    return this.op("mkdir", path, () => this.inner.mkdir(path));
  }
  list(directory: string) {
    return this.op("list", directory, () => this.inner.list(directory));
  }
  stat(path: string) {
    return this.op("stat", path, () => this.inner.stat(path));
  }
  read(path: string, range?: { offset: number; length: number }) {
    return this.op("read", path, () => this.inner.read(path, range));
  }
  async openAppend(path: string): Promise<AppendFile> {
    const file = await this.op("openAppend", path, () => this.inner.openAppend(path));
    return {
      path,
      append: (data) =>
        this.op(
          "append",
          path,
          () => file.append(data),
          () => file.append(data.subarray(0, Math.floor(data.length / 2))),
        ),
      flush: () => this.op("flush", path, () => file.flush()),
      close: () => this.op("close", path, () => file.close()),
    };
  }
  write(path: string, data: Uint8Array) {
    return this.op(
      "write",
      path,
      () => this.inner.write(path, data),
      () => this.inner.write(path, data.subarray(0, Math.floor(data.length / 2))),
    );
  }
  flush(path: string) {
    return this.op("flush", path, () => this.inner.flush(path));
  }
  rename(from: string, to: string) {
    return this.op("rename", from, () => this.inner.rename(from, to));
  }
  remove(path: string) {
    return this.op("remove", path, () => this.inner.remove(path));
  }
  removeDirectory(path: string) {
    return this.op("removeDirectory", path, async () => this.inner.removeDirectory?.(path));
  }
  truncate(path: string, size: number) {
    return this.op("truncate", path, () => this.inner.truncate(path, size));
  }
  lock(path: string): Promise<FileLock> {
    return this.inner.lock(path);
  }
}
