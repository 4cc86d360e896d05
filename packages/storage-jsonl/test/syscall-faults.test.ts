import { registerSyscallFaultConformance } from "@durably/contract-tests";
import { describe, expect, it } from "vitest";
import { openJsonlStorage } from "../src/index.js";

// Real syscall faults (strace -e inject) in a child committing to a JSONL
// directory; everything in the directory (LOCK, main.jsonl, doc-*.jsonl,
// task-*.jsonl, temporary files) is this backend's.
const faults = { files: (path: string) => [path] };

registerSyscallFaultConformance({ describe, it, expect }, "JSONL storage", {
  childModule: new URL("./crash/open-child.ts", import.meta.url),
  open: (path) => openJsonlStorage(path),
  nodeArgs: ["--conditions=@durably/source", "--import", "tsx"],
  syscallFaults: faults,
});

// With fsync on, sidecars are flushed before the markers and markers before
// publishing: the sync faults land inside commits.
registerSyscallFaultConformance({ describe, it, expect }, "JSONL storage (fsync on)", {
  childModule: new URL("./crash/open-child-fsync.ts", import.meta.url),
  open: (path) => openJsonlStorage(path, { fsync: true }),
  nodeArgs: ["--conditions=@durably/source", "--import", "tsx"],
  syscallFaults: faults,
});
