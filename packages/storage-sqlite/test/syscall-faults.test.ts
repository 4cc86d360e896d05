import { registerSyscallFaultConformance } from "@durably/contract-tests";
import { describe, expect, it } from "vitest";
import { openSqliteStorage } from "../src/index.js";

// Real syscall faults (strace -e inject) in a child committing to one SQLite
// file. The backend's files: the database, its WAL, its shared-memory index
// and (outside WAL mode) its rollback journal.
const syscallFaults = {
  files: (path: string) => [path, `${path}-wal`, `${path}-shm`, `${path}-journal`],
};

registerSyscallFaultConformance({ describe, it, expect }, "SqliteStorage", {
  childModule: new URL("./crash/open-child.ts", import.meta.url),
  open: (path) => openSqliteStorage(path),
  nodeArgs: ["--conditions=@durably/source", "--import", "tsx"],
  syscallFaults,
});

// With synchronous "full" every commit fsyncs the WAL before it is
// acknowledged, so sync faults land inside commits, not only in close.
registerSyscallFaultConformance({ describe, it, expect }, 'SqliteStorage (synchronous "full")', {
  childModule: new URL("./crash/open-child-full.ts", import.meta.url),
  open: (path) => openSqliteStorage(path, { synchronous: "full" }),
  nodeArgs: ["--conditions=@durably/source", "--import", "tsx"],
  syscallFaults,
});
