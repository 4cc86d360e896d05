import { basename } from "node:path";
import { registerSyscallFaultConformance } from "@durably/contract-tests";
import { describe, expect, it } from "vitest";
import { open } from "./crash/open-child.js";

// Real syscall faults (strace -e inject) in a child committing to StoreStorage
// on classic-level: the LevelDB directory is this backend's (CURRENT, LOCK,
// MANIFEST-*, *.log, *.ldb). LevelDB's own diagnostic log (LOG, LOG.old) holds
// no data and LevelDB ignores its write errors by design, so no fault is aimed there.
registerSyscallFaultConformance({ describe, it, expect }, "StoreStorage on classic-level", {
  childModule: new URL("./crash/open-child.ts", import.meta.url),
  open,
  nodeArgs: ["--conditions=@durably/source", "--import", "tsx"],
  syscallFaults: {
    files: (path) => [path],
    ignore: (file) => ["LOG", "LOG.old"].includes(basename(file)),
    // Found by this suite: when opening the newest log (000009.log, holding the
    // last acknowledged commit) fails during recovery, LevelDB (paranoid_checks
    // off, classic-level's default) logs "Ignoring error", opens without that
    // log's commits and deletes the log; the next commits reuse their ids and seqs.
    replay: [{ syscall: "openat", errno: "EMFILE", when: 5 }],
  },
});
