import { execFileSync } from "node:child_process";
import { closeSync, existsSync, openSync, rmSync, writeSync } from "node:fs";
import { join } from "node:path";
import { ClassicLevel } from "classic-level";
import { describe, expect, it } from "vitest";
import { StorageIOError } from "@durably/core";
import { StoreStorage, levelStore } from "../src/index.js";
import { tempDir } from "./backends.js";
import { spawnTs } from "./child.js";
import { openOnce, reopenAndRead, writeCommits } from "./level-files.js";

/**
 * LevelDB writes at every open, even of a cleanly closed store: a table of
 * the commits its logs hold, a new MANIFEST, a new log. On a full disk that
 * open fails; it must fail as a StorageIOError that says the disk is full,
 * and lose nothing: once there is space, the store opens with every commit.
 */

const STRACE = process.env.STRACE_PATH ?? "/usr/bin/strace";

/** Every file name LevelDB may write in a young store: tables, logs, MANIFESTs, CURRENT's temporary file. */
function writableFiles(location: string): string[] {
  return Array.from({ length: 40 }, (_x, i) => String(i + 1).padStart(6, "0")).flatMap((n) =>
    [`${n}.ldb`, `${n}.log`, `MANIFEST-${n}`, `${n}.dbtmp`].map((name) => join(location, name)),
  );
}

/** Opens the store in a child under strace, every write to LevelDB's files failing with ENOSPC; returns its outcome. */
async function openOnFullDisk(location: string): Promise<Record<string, unknown>> {
  if (!existsSync(STRACE))
    throw new Error(`strace not found at ${STRACE}: install it or set STRACE_PATH`);
  const writes = "write,pwrite64,writev,pwritev,pwritev2";
  const child = spawnTs("./fixtures/fault-child.ts", ["read", location, "1"], {
    prefix: [
      STRACE,
      "-f",
      "-o",
      "/dev/null",
      ...writableFiles(location).flatMap((file) => ["-P", file]),
      "-e",
      `trace=${writes}`,
      "-e",
      `inject=${writes}:error=ENOSPC:when=1+`,
    ],
  });
  let out = "";
  let err = "";
  child.stdout?.on("data", (chunk: Buffer) => (out += chunk.toString()));
  child.stderr?.on("data", (chunk: Buffer) => (err += chunk.toString()));
  await new Promise((resolve) => child.once("exit", resolve));
  const line = out.split("\n").find((l) => l.startsWith("{"));
  if (line === undefined) throw new Error(`the child printed no outcome: ${out} ${err}`);
  return JSON.parse(line) as Record<string, unknown>;
}

function expectDiskFull(
  outcome: { name?: unknown; message?: unknown; location?: unknown },
  location: string,
) {
  expect(outcome.name, JSON.stringify(outcome)).toBe("StorageIOError");
  const message = String(outcome.message);
  expect(message).toMatch(
    new RegExp(`^${location}: I/O error during open: IO error: ${location}/`),
  );
  expect(message).toContain("No space left on device");
  expect(message).toContain(`ENOSPC: the file system holding ${location} is full`);
  expect(message).toContain("nothing was lost: free some space and open again");
  expect((outcome.location as { file?: string }).file).toMatch(new RegExp(`^${location}/`));
}

/** Why a small tmpfs cannot be mounted here (mounting needs root and a kernel that allows it), or undefined. */
function tmpfsUnavailable(): string | undefined {
  if (process.getuid?.() !== 0) return "mounting a tmpfs needs root";
  const probe = tempDir("durably-mount-");
  try {
    execFileSync("mount", ["-t", "tmpfs", "-o", "size=64k", "tmpfs", probe], { stdio: "pipe" });
    execFileSync("umount", [probe], { stdio: "pipe" });
    return undefined;
  } catch (error) {
    return `cannot mount a tmpfs here: ${(error as Error).message.split("\n")[0]}`;
  } finally {
    rmSync(probe, { recursive: true, force: true });
  }
}

describe("levelStore on classic-level > a full disk at open (real ENOSPC)", () => {
  it("every write failing with ENOSPC (strace) while a cleanly closed store opens: StorageIOError naming the directory and ENOSPC; once there is space, every commit is there", async () => {
    const dir = tempDir();
    try {
      // Commits in the log: the open must write them into a table first.
      const inLog = join(dir, "in-log");
      await writeCommits(inLog, 20);
      // Commits in tables, an empty log: the open must still write a MANIFEST.
      const inTables = join(dir, "in-tables");
      await writeCommits(inTables, 20, { compact: true });
      await openOnce(inTables);
      for (const location of [inLog, inTables]) {
        expectDiskFull(await openOnFullDisk(location), location);
        expect(await reopenAndRead(location, 20)).toEqual({ prefix: 20 });
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  const cannotMount = tmpfsUnavailable();
  if (cannotMount !== undefined) console.log(`skipped the tmpfs full-disk case: ${cannotMount}`);
  it.skipIf(cannotMount !== undefined)(
    "on a real full file system (a 1 MiB tmpfs, root only): the same error, and every commit once space is freed",
    async () => {
      const mount = tempDir("durably-full-");
      try {
        execFileSync("mount", ["-t", "tmpfs", "-o", "size=1024k", "tmpfs", mount]);
        const location = join(mount, "db");
        await writeCommits(location, 20);
        const filler = join(mount, "filler");
        const fd = openSync(filler, "w");
        try {
          const block = Buffer.alloc(4096);
          for (;;) writeSync(fd, block);
        } catch {
          // Full.
        } finally {
          closeSync(fd);
        }
        const error = await StoreStorage.open(levelStore(new ClassicLevel(location))).catch(
          (e: unknown) => e,
        );
        expect(error).toBeInstanceOf(StorageIOError);
        expectDiskFull(error as StorageIOError, location);
        rmSync(filler);
        expect(await reopenAndRead(location, 20)).toEqual({ prefix: 20 });
      } finally {
        try {
          execFileSync("umount", [mount], { stdio: "ignore" });
        } catch {
          // Not mounted.
        }
        rmSync(mount, { recursive: true, force: true });
      }
    },
  );
});
