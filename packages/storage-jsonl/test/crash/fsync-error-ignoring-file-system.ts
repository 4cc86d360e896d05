import type { AppendFile, FileSystem } from "../../src/index.js";

/**
 * A deliberately broken disk for the syscall-fault suite's self-test: it
 * really calls fsync, but throws its error away (the classic "retry fsync
 * and carry on" mistake), so a commit whose flush failed is acknowledged.
 * Everything else is the real `node:fs` port.
 */
export function fsyncErrorIgnoringFileSystem(inner: FileSystem): FileSystem {
  return {
    ...inner,
    flush: (path) => inner.flush(path).catch(() => undefined),
    async openAppend(path): Promise<AppendFile> {
      const file = await inner.openAppend(path);
      return {
        path: file.path,
        append: (data) => file.append(data),
        flush: () => file.flush().catch(() => undefined),
        close: () => file.close(),
      };
    },
  };
}
