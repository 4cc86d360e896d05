import { existsSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { tempDir } from "./backends.js";
import { killed, spawnTs, waitForLine } from "./child.js";
import { writeCommits } from "./level-files.js";

/**
 * `levelStore(db, { sync: true })` passes LevelDB's `sync` write option with
 * each commit's atomic write: LevelDB then fdatasyncs its log before the
 * write resolves, so an acknowledged commit survives a power loss. Without
 * it the log is only written (it survives a process crash). Counted with
 * strace on the real child process.
 */

const STRACE = process.env.STRACE_PATH ?? "/usr/bin/strace";

/** Runs `commits` commits in a child under strace; returns the syncs of LevelDB's log files it made. */
async function logSyncs(sync: boolean, commits: number): Promise<string[]> {
  // Fail, never skip: the test needs strace (apt-get install -y strace).
  if (!existsSync(STRACE))
    throw new Error(`strace not found at ${STRACE}: install it or set STRACE_PATH`);
  const dir = tempDir();
  try {
    const location = join(dir, "db");
    await writeCommits(location, 1);
    const trace = join(dir, "strace.log");
    const child = spawnTs("./fixtures/fault-child.ts", ["write", location, sync ? "1" : "0"], {
      stdin: true,
      prefix: [STRACE, "-f", "-y", "-o", trace, "-e", "trace=fsync,fdatasync"],
    });
    try {
      const lines: string[] = [];
      child.stdout?.on("data", (chunk: Buffer) => lines.push(...chunk.toString().split("\n")));
      await waitForLine(child, "ready");
      const before = readFileSync(trace, "utf8").split("\n").length;
      for (let i = 0; i < commits; i++) {
        const have = lines.filter((l) => l.startsWith("{")).length;
        child.stdin?.write("commit\n");
        for (let t = 0; t < 400 && lines.filter((l) => l.startsWith("{")).length === have; t++)
          await new Promise((resolve) => setTimeout(resolve, 25));
      }
      expect(lines.filter((l) => l.startsWith("{"))).toEqual(
        Array.from({ length: commits }, () => '{"ok":1}'),
      );
      // The calls made while committing: after "ready", on files named NNNNNN.log.
      return readFileSync(trace, "utf8")
        .split("\n")
        .slice(before - 1)
        .filter((line) => /sync\(\d+<[^>]*\/\d+\.log>\) = 0/.test(line));
    } finally {
      await killed(child);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe("levelStore on classic-level > durability of commits", () => {
  it("with sync: true every commit's write is synced to disk (one fdatasync of the log per commit) before it is acknowledged", async () => {
    expect(await logSyncs(true, 5)).toHaveLength(5);
  });

  it("by default commits write the log without syncing it (a process crash keeps them, a power loss may not)", async () => {
    expect(await logSyncs(false, 5)).toEqual([]);
  });
});
