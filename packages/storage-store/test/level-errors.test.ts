import { spawn } from "node:child_process";
import { existsSync, readFileSync, rmSync, unlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ClassicLevel } from "classic-level";
import { describe, expect, it } from "vitest";
import { StorageCorrupted } from "@durably/core";
import { StoreStorage, levelStore } from "../src/index.js";
import { tempDir } from "./backends.js";
import { killed, spawnTs, waitForLine } from "./child.js";
import { damage, largest, openOnce, reopenAndRead, writeCommits } from "./level-files.js";

/**
 * What LevelDB raises (LEVEL_CORRUPTION, LEVEL_IO_ERROR) reaches the caller
 * as a Durably error naming the database and the key or range, with the
 * original attached. The core has no I/O error class: an I/O failure is
 * StoragePoisoned (the storage stops until reopened).
 */

const STRACE = process.env.STRACE_PATH ?? "/usr/bin/strace";

async function withStore(n: number, run: (location: string) => Promise<void>): Promise<void> {
  const dir = tempDir();
  try {
    const location = join(dir, "db");
    await writeCommits(location, n, { compact: true });
    await openOnce(location);
    await run(location);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function codeOf(error: unknown): unknown {
  return ((error as { cause?: { code?: unknown } }).cause ?? {}).code;
}

describe("levelStore on classic-level > LevelDB corruption is StorageCorrupted with the place", () => {
  it("corruption LevelDB reports at open (a CURRENT without its newline) names the directory", async () => {
    await withStore(5, async (location) => {
      const current = join(location, "CURRENT");
      writeFileSync(current, readFileSync(current, "utf8").trimEnd());
      const error = await StoreStorage.open(levelStore(new ClassicLevel(location))).catch(
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(StorageCorrupted);
      expect(codeOf(error)).toBe("LEVEL_DATABASE_NOT_OPEN");
      expect((error as Error).message).toContain(
        `${location}: the database reports corruption during open`,
      );
      expect((error as StorageCorrupted).location.file).toBe(location);
    });
  });

  it("a table file the MANIFEST lists but the directory lacks is StorageCorrupted at open", async () => {
    await withStore(5, async (location) => {
      unlinkSync(largest(location, ".ldb"));
      const error = await StoreStorage.open(levelStore(new ClassicLevel(location))).catch(
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(StorageCorrupted);
      expect((error as Error).message).toMatch(/missing files/);
    });
  });

  it("a damaged table block met by a read (table checks off) is StorageCorrupted naming the directory and the key or range, LEVEL_CORRUPTION attached", async () => {
    await withStore(250, async (location) => {
      damage(largest(location, ".ldb"), "zero-4k", 8192);
      const outcome = await reopenAndRead(location, 250, { checkTables: false });
      expect("error" in outcome, JSON.stringify(outcome)).toBe(true);
      const error = (outcome as { error: StorageCorrupted }).error;
      expect(error).toBeInstanceOf(StorageCorrupted);
      expect(error.message).toMatch(
        new RegExp(
          `^${location}, (key|keys from) .*: the database reports corruption during a (range )?read: Corruption: `,
        ),
      );
      expect(codeOf(error)).toBe("LEVEL_CORRUPTION");
      expect(error.location.file).toBe(location);
    });
  });
});

describe("levelStore on classic-level > LevelDB I/O errors (real syscall faults with strace)", () => {
  function requireStrace(): void {
    // Fail, never skip: the fault tests need strace (apt-get install -y strace).
    if (!existsSync(STRACE))
      throw new Error(`strace not found at ${STRACE}: install it or set STRACE_PATH`);
  }

  async function readUnderFault(
    location: string,
    checkTables: boolean,
  ): Promise<Record<string, unknown>> {
    const table = largest(location, ".ldb");
    const child = spawnTs(
      "./fixtures/fault-child.ts",
      ["read", location, checkTables ? "1" : "0"],
      {
        prefix: [
          STRACE,
          "-f",
          "-o",
          "/dev/null",
          "-P",
          table,
          "-e",
          "trace=openat",
          "-e",
          "inject=openat:error=EIO",
        ],
      },
    );
    let out = "";
    let err = "";
    child.stdout?.on("data", (chunk: Buffer) => (out += chunk.toString()));
    child.stderr?.on("data", (chunk: Buffer) => (err += chunk.toString()));
    await new Promise((resolve) => child.once("exit", resolve));
    const line = out.split("\n").find((l) => l.startsWith("{"));
    if (line === undefined) throw new Error(`the child printed no outcome: ${out} ${err}`);
    return JSON.parse(line) as Record<string, unknown>;
  }

  it("EIO opening a table file during a read is StoragePoisoned naming the directory and the key, LEVEL_IO_ERROR attached", async () => {
    requireStrace();
    await withStore(5, async (location) => {
      const outcome = await readUnderFault(location, false);
      expect(outcome.name).toBe("StoragePoisoned");
      expect(outcome.causeCode).toBe("LEVEL_IO_ERROR");
      expect(outcome.message).toMatch(
        new RegExp(
          `^${location}, (key|keys from) .*: I/O error during a (range )?read: IO error: .*Input/output error`,
        ),
      );
    });
  });

  it("EIO reading a table file for the checks before open is StoragePoisoned naming the file", async () => {
    requireStrace();
    await withStore(5, async (location) => {
      const outcome = await readUnderFault(location, true);
      expect(outcome.name).toBe("StoragePoisoned");
      expect(outcome.causeCode).toBe("EIO");
      expect(outcome.message).toContain(`${largest(location, ".ldb")}: cannot read the table file`);
    });
  });

  it("EIO from fdatasync on a synced commit rejects it as StoragePoisoned (LEVEL_IO_ERROR attached) and every later call as StoragePoisoned", async () => {
    requireStrace();
    await withStore(1, async (location) => {
      const child = spawnTs("./fixtures/fault-child.ts", ["write", location], { stdin: true });
      let strace: ReturnType<typeof spawn> | undefined;
      try {
        const lines: string[] = [];
        let out = "";
        child.stdout?.on("data", (chunk: Buffer) => {
          out += chunk.toString();
          const parts = out.split("\n");
          out = parts.pop() ?? "";
          lines.push(...parts);
        });
        await waitForLine(child, "ready");
        const next = async () => {
          const have = lines.length;
          child.stdin?.write("commit\n");
          for (let i = 0; i < 200 && lines.length <= have; i++)
            await new Promise((resolve) => setTimeout(resolve, 25));
          return JSON.parse(lines[lines.length - 1] ?? "null") as Record<string, unknown>;
        };
        expect(await next()).toEqual({ ok: 1 });
        // Attach to the running child: from now on every fdatasync fails with EIO.
        strace = spawn(
          STRACE,
          [
            "-f",
            "-p",
            String(child.pid),
            "-o",
            "/dev/null",
            "-e",
            "trace=fdatasync",
            "-e",
            "inject=fdatasync:error=EIO",
          ],
          { stdio: ["ignore", "ignore", "pipe"] },
        );
        let attached = "";
        await new Promise<void>((resolve, reject) => {
          strace?.stderr?.on("data", (chunk: Buffer) => {
            attached += chunk.toString();
            if (/attached/.test(attached)) resolve();
          });
          strace?.once("exit", (code) => reject(new Error(`strace exited (${code}): ${attached}`)));
        });
        const failed = await next();
        expect(failed.name).toBe("StoragePoisoned");
        expect(failed.causeCode).toBe("LEVEL_IO_ERROR");
        expect(failed.message).toMatch(
          new RegExp(
            `^${location}: I/O error during a write of \\d+ key\\(s\\): IO error: .*Input/output error`,
          ),
        );
        const later = await next();
        expect(later.name).toBe("StoragePoisoned");
        expect(later.message).toContain("reopen the storage");
      } finally {
        if (strace !== undefined) await killed(strace);
        await killed(child);
      }
    });
  });
});
