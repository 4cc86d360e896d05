import type { AppendFile, FileLock, FileSystem } from "../../src/index.js";

/** How long an acknowledged append waits in memory before it reaches the file. */
const WRITE_BEHIND_MS = 50;

/**
 * A deliberately broken disk for the crash suite's self-test: `append`
 * resolves at once and the bytes reach the file up to 50 ms later (in
 * order), and `flush` returns without forcing anything. A SIGKILL in that
 * window loses acknowledged data, exactly what a backend trusting such a
 * disk cannot survive. Every other operation first drains what is pending,
 * so the files the backend reads stay consistent while the process lives.
 */
export function lateWriteFileSystem(inner: FileSystem): FileSystem {
  let pending: { file: AppendFile; data: Uint8Array }[] = [];
  let draining: Promise<void> = Promise.resolve();
  let timer: NodeJS.Timeout | undefined;

  const drain = (): Promise<void> => {
    if (timer !== undefined) clearTimeout(timer);
    timer = undefined;
    const batch = pending;
    pending = [];
    draining = draining.then(async () => {
      for (const { file, data } of batch) await file.append(data);
    });
    return draining;
  };
  const schedule = (): void => {
    timer ??= setTimeout(() => void drain(), WRITE_BEHIND_MS);
  };
  const drained = async <T>(run: () => Promise<T>): Promise<T> => {
    await drain();
    return run();
  };

  return {
    mkdir: (path) => drained(() => inner.mkdir(path)),
    list: (directory) => drained(() => inner.list(directory)),
    stat: (path) => drained(() => inner.stat(path)),
    read: (path, range) => drained(() => inner.read(path, range)),
    write: (path, data) => drained(() => inner.write(path, data)),
    rename: (from, to) => drained(() => inner.rename(from, to)),
    remove: (path) => drained(() => inner.remove(path)),
    truncate: (path, size) => drained(() => inner.truncate(path, size)),
    lock: (path): Promise<FileLock> => inner.lock(path),
    // The lie: a flush that forces nothing.
    flush: () => Promise.resolve(),
    async openAppend(path): Promise<AppendFile> {
      const file = await drained(() => inner.openAppend(path));
      return {
        path: file.path,
        append(data) {
          pending.push({ file, data: data.slice() });
          schedule();
          return Promise.resolve();
        },
        flush: () => Promise.resolve(),
        close: () => drained(() => file.close()),
      };
    },
  };
}
