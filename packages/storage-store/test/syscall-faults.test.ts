import { basename } from "node:path";
import { registerSyscallFaultConformance } from "@durably/contract-tests";
import { describe, expect, it } from "vitest";
import { open } from "./crash/open-child.js";
import { open as openSynced } from "./crash/open-child-sync.js";
import { open as openUnchecked } from "./crash/open-child-unchecked-tables.js";

// Real syscall faults (strace -e inject) in a child committing to StoreStorage
// on classic-level: the LevelDB directory is this backend's (CURRENT, LOCK,
// MANIFEST-*, *.log, *.ldb, and durably-recovery/ where the open keeps copies
// of the logs). LevelDB's own diagnostic log (LOG, LOG.old) holds no data and
// LevelDB ignores its write errors by design, so no fault is aimed there.
const files = (path: string) => [path];
const ignore = (file: string) => ["LOG", "LOG.old"].includes(basename(file));
const nodeArgs = ["--conditions=@durably/source", "--import", "tsx"];

// Found by this suite: when opening the newest log (000009.log, holding the last
// acknowledged commit) fails during recovery, LevelDB (paranoid_checks off,
// classic-level's default) logs "Ignoring error", opens without that log's commits
// and deletes the log; the next commits reused their ids and seqs. strace counts
// `when` per thread: LevelDB opens the log as call 5 of its worker thread, and
// here the checks before the open (main thread) make 6 calls, so call 5 is theirs
// (a table file) and this replay fails the open before LevelDB starts. The
// variant without table checks below makes 4, so there call 5 is LevelDB's open
// of the log.
const LOG_OPEN_FAILS = { syscall: "openat", errno: "EMFILE", when: 5 };

registerSyscallFaultConformance({ describe, it, expect }, "StoreStorage on classic-level", {
  childModule: new URL("./crash/open-child.ts", import.meta.url),
  open,
  nodeArgs,
  syscallFaults: { files, ignore, replay: [LOG_OPEN_FAILS] },
});

// Every commit's write synced (levelStore's `sync: true`): the commits then make
// fdatasync calls of their own, and their faults must reach the writer too.
registerSyscallFaultConformance(
  { describe, it, expect },
  "StoreStorage on classic-level with sync: true",
  {
    childModule: new URL("./crash/open-child-sync.ts", import.meta.url),
    open: openSynced,
    nodeArgs,
    syscallFaults: { files, ignore },
  },
);

// Without the table checks the open reads fewer files before LevelDB starts, so
// the replayed fault lands on LevelDB's own open of the newest log.
registerSyscallFaultConformance(
  { describe, it, expect },
  "StoreStorage on classic-level with checkTables: false",
  {
    childModule: new URL("./crash/open-child-unchecked-tables.ts", import.meta.url),
    open: openUnchecked,
    nodeArgs,
    syscallFaults: { files, ignore, replay: [LOG_OPEN_FAILS] },
  },
);
