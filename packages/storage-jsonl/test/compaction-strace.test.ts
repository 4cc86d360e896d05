import { cpSync } from "node:fs";
import { straceFaultArgs, straceSupport } from "@durably/contract-tests";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  expectOneWholeGeneration,
  prepareCompactionStorage,
  runCompactionChild,
} from "./support/compaction-crash.js";
import { tempDir } from "./support/temp-dir.js";

// Real syscall faults inside a compaction: the child (committing while it compacts) runs under
// `strace -f -e inject=...`, restricted with -P to one path of the compaction, so the fault lands
// on that file's first matching call (strace counts calls per thread, and libuv runs file calls on
// several threads, so only a path's first call is a reliable target: the directory flush after the
// switch, the second flush of the storage directory, is covered through the FileSystem port in
// compaction-faults.test.ts instead). Each case says which side of the switch it is on
// and what the storage must do; every case then reopens and checks every acknowledged commit.

const strace = straceSupport();
const unusable = strace.usable ? undefined : strace.reason;

interface Case {
  name: string;
  syscalls: string;
  errno: string;
  path: (dir: string) => string;
  /** before: the compaction fails, the storage goes on; switch: it poisons; after: it finished. */
  side: "before" | "switch" | "after";
  generation: 0 | 1;
}

const CASES: Case[] = [
  {
    name: "ENOSPC writing the snapshot",
    syscalls: "write,pwrite64,writev,pwritev",
    errno: "ENOSPC",
    path: (d) => `${d}/gen-1/snapshot.jsonl`,
    side: "before",
    generation: 0,
  },
  {
    name: "EIO flushing the snapshot",
    syscalls: "fsync,fdatasync",
    errno: "EIO",
    path: (d) => `${d}/gen-1/snapshot.jsonl`,
    side: "before",
    generation: 0,
  },
  {
    name: "EIO flushing a copied document file",
    syscalls: "fsync,fdatasync",
    errno: "EIO",
    path: (d) => `${d}/gen-1/doc-3.jsonl`,
    side: "before",
    generation: 0,
  },
  {
    name: "EACCES creating the new tail",
    syscalls: "openat",
    errno: "EACCES",
    path: (d) => `${d}/gen-1/main.jsonl`,
    side: "before",
    generation: 0,
  },
  {
    name: "EIO writing the pointer's temp file",
    syscalls: "write,pwrite64,writev,pwritev",
    errno: "EIO",
    path: (d) => `${d}/CURRENT.tmp`,
    side: "before",
    generation: 0,
  },
  {
    name: "EIO renaming the pointer (the switch)",
    syscalls: "rename,renameat,renameat2",
    errno: "EIO",
    path: (d) => `${d}/CURRENT.tmp`,
    side: "switch",
    generation: 0,
  },
  {
    name: "EIO removing the old main.jsonl",
    syscalls: "unlink,unlinkat",
    errno: "EIO",
    path: (d) => `${d}/main.jsonl`,
    side: "after",
    generation: 1,
  },
];

describe.skipIf(unusable !== undefined)(
  `strace-injected faults inside a compaction${unusable ? ` (skipped: ${unusable})` : ""}`,
  () => {
    let template: { path: string; remove(): void };
    beforeAll(async () => {
      template = tempDir();
      await prepareCompactionStorage(template.path, false);
    });
    afterAll(() => template.remove());

    for (const c of CASES)
      it(`${c.name}: ${c.side === "before" ? "the compaction fails, commits go on in the old generation" : c.side === "switch" ? "the storage poisons" : "the compaction finishes, the removal is retried"}; the reopen finds generation ${c.generation} whole`, async () => {
        const dir = tempDir();
        try {
          cpSync(template.path, dir.path, { recursive: true });
          if (!strace.usable) throw new Error(strace.reason);
          const wrapper = straceFaultArgs(strace, {
            path: c.path(dir.path),
            syscalls: c.syscalls,
            errno: c.errno,
            when: "1",
          });
          const run = await runCompactionChild(dir.path, false, "-1:none", wrapper);
          const where = `${c.name}: ${run.lines.filter((l) => !l.startsWith("ack") && !l.startsWith("op")).join(" | ")} ${run.stderr}`;
          expect(run.lines, where).toContain("done");
          const settled = run.lines.find((l) => l.startsWith("compact"));
          if (c.side === "after") expect(settled, where).toBe("compacted 1");
          else if (c.side === "before")
            expect(settled, where).toMatch(new RegExp(`^compact-failed .*${c.errno}`));
          // The poisoning error carries the injected error as its cause.
          else expect(settled, where).toMatch(/^compact-failed StoragePoisoned/);
          const poisoned = run.lines.some((l) => l.startsWith("poisoned"));
          expect(poisoned, where).toBe(c.side === "switch");
          const found = await expectOneWholeGeneration(dir.path, false, run, where);
          expect(found.generation, where).toBe(c.generation);
        } finally {
          dir.remove();
        }
      }, 60_000);
  },
);
