import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, readdirSync, rmSync, unlinkSync } from "node:fs";
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
 * original attached. An I/O failure while opening or reading is
 * StorageIOError (nothing changed; the storage stays usable), one during a
 * write is StoragePoisoned (the storage stops until reopened).
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
  it("corruption LevelDB reports at open (a table file the MANIFEST lists is missing) names the directory, LevelDB's error attached", async () => {
    await withStore(5, async (location) => {
      unlinkSync(largest(location, ".ldb"));
      const error = await StoreStorage.open(levelStore(new ClassicLevel(location))).catch(
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(StorageCorrupted);
      expect(codeOf(error)).toBe("LEVEL_DATABASE_NOT_OPEN");
      expect((error as Error).message).toContain(
        `${location}: the database reports corruption during open`,
      );
      expect((error as Error).message).toMatch(/missing files/);
      expect((error as StorageCorrupted).location.file).toBe(location);
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

  /** Runs the fault child under strace, every `openat` of `file` failing with EIO (`when` as strace takes it); returns its JSON lines. */
  async function underOpenFault(
    file: string,
    args: string[],
    when?: string,
  ): Promise<Record<string, unknown>[]> {
    const inject = `inject=openat:error=EIO${when === undefined ? "" : `:when=${when}`}`;
    const child = spawnTs("./fixtures/fault-child.ts", args, {
      prefix: [STRACE, "-f", "-o", "/dev/null", "-P", file, "-e", "trace=openat", "-e", inject],
    });
    let out = "";
    let err = "";
    child.stdout?.on("data", (chunk: Buffer) => (out += chunk.toString()));
    child.stderr?.on("data", (chunk: Buffer) => (err += chunk.toString()));
    await new Promise((resolve) => child.once("exit", resolve));
    const lines = out.split("\n").filter((l) => l.startsWith("{"));
    if (lines.length === 0) throw new Error(`the child printed no outcome: ${out} ${err}`);
    return lines.map((line) => JSON.parse(line) as Record<string, unknown>);
  }

  it("EIO opening a table file during a read is StorageIOError naming the directory and the key, LEVEL_IO_ERROR attached", async () => {
    requireStrace();
    await withStore(5, async (location) => {
      const [outcome] = await underOpenFault(largest(location, ".ldb"), ["read", location, "0"]);
      expect(outcome?.name).toBe("StorageIOError");
      expect(outcome?.causeCode).toBe("LEVEL_IO_ERROR");
      expect(outcome?.message).toMatch(
        new RegExp(
          `^${location}, (key|keys from) .*: I/O error during a (range )?read: IO error: .*Input/output error`,
        ),
      );
      expect((outcome?.location as { file?: string }).file).toBe(largest(location, ".ldb"));
    });
  });

  /**
   * A store of about 1.5 MB whose entries are split over table files of
   * 1 MiB (LevelDB's smallest), so conversation 1's record and first entries
   * sit in a table that opening the storage does not read: the first scan
   * opens it.
   */
  async function writeSplitStore(location: string): Promise<void> {
    const options = { maxFileSize: 1 << 20 };
    const none = () => undefined;
    let storage = await StoreStorage.open(levelStore(new ClassicLevel(location, options)));
    await storage.commit([[{ type: "conversation", value: { id: 1 as never } }]], none);
    for (let id = 2; id < 702; id++)
      await storage.commit(
        [
          [
            {
              type: "entry",
              value: {
                id,
                conversationId: 1,
                kind: "n",
                data: randomBytes(1500).toString("base64"),
              },
            } as never,
          ],
        ],
        none,
      );
    await storage.close();
    await openOnce(location);
    // One more write, then a compaction merges the two tables into 1 MiB ones.
    const db = new ClassicLevel(location, options);
    storage = await StoreStorage.open(levelStore(db));
    await storage.commit([[{ type: "conversation", value: { id: 2 as never } }]], none);
    await (db as unknown as { compactRange(a: string, b: string): Promise<void> }).compactRange(
      "\x00",
      "\xff",
    );
    await storage.close();
  }

  /** Attaches strace to every thread of `pid`: each thread's first `openat` of one of `files` fails with EIO. */
  async function attachOpenFault(pid: number, files: string[]): Promise<ReturnType<typeof spawn>> {
    const strace = spawn(
      STRACE,
      [
        "-f",
        "-p",
        String(pid),
        "-o",
        "/dev/null",
        ...files.flatMap((file) => ["-P", file]),
        "-e",
        "trace=openat",
        "-e",
        "inject=openat:error=EIO:when=1",
      ],
      { stdio: ["ignore", "ignore", "pipe"] },
    );
    let attached = "";
    await new Promise<void>((resolve, reject) => {
      strace.stderr?.on("data", (chunk: Buffer) => {
        attached += chunk.toString();
        if (/attached/.test(attached)) resolve();
      });
      strace.once("exit", (code) => reject(new Error(`strace exited (${code}): ${attached}`)));
    });
    return strace;
  }

  it("after a read fails with an I/O error the storage stays usable: once the fault is gone the same read succeeds and a commit is stored", async () => {
    requireStrace();
    const dir = tempDir();
    const location = join(dir, "db");
    await writeSplitStore(location);
    const child = spawnTs("./fixtures/fault-child.ts", ["read-again", location], { stdin: true });
    let strace: ReturnType<typeof spawn> | undefined;
    try {
      let out = "";
      child.stdout?.on("data", (chunk: Buffer) => (out += chunk.toString()));
      const exited = new Promise((resolve) => child.once("exit", resolve));
      await waitForLine(child, "ready");
      const tables = readdirSync(location)
        .filter((name) => name.endsWith(".ldb"))
        .map((name) => join(location, name));
      expect(tables.length).toBeGreaterThanOrEqual(2);
      strace = await attachOpenFault(child.pid as number, tables);
      child.stdin?.end("go\n");
      await exited;
      const [first, after] = out
        .split("\n")
        .filter((line) => line.startsWith("{"))
        .map((line) => JSON.parse(line) as Record<string, unknown>);
      expect(first?.name, out).toBe("StorageIOError");
      expect(first?.causeCode).toBe("LEVEL_IO_ERROR");
      // strace counts per thread: each of libuv's worker threads fails its first open once.
      expect(after?.failures).toBeGreaterThanOrEqual(1);
      expect(after?.failures).toBeLessThanOrEqual(4);
      expect(after?.ok).toBe(100);
      expect(after?.commit).toBe(1);
    } finally {
      if (strace !== undefined) await killed(strace);
      await killed(child);
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("EIO reading a table file for the checks before open is StorageIOError naming the file", async () => {
    requireStrace();
    await withStore(5, async (location) => {
      const table = largest(location, ".ldb");
      const [outcome] = await underOpenFault(table, ["read", location, "1"]);
      expect(outcome?.name).toBe("StorageIOError");
      expect(outcome?.causeCode).toBe("EIO");
      expect(outcome?.message).toContain(`${table}: cannot read the table file`);
      expect((outcome?.location as { file?: string }).file).toBe(table);
    });
  });

  it("EIO from LevelDB while it opens the database (its LOCK file) is StorageIOError naming the file, LEVEL_IO_ERROR attached", async () => {
    requireStrace();
    await withStore(5, async (location) => {
      const lock = join(location, "LOCK");
      const [outcome] = await underOpenFault(lock, ["read", location, "1"]);
      expect(outcome?.name).toBe("StorageIOError");
      expect(outcome?.causeCode).toBe("LEVEL_DATABASE_NOT_OPEN");
      expect(outcome?.message).toMatch(
        new RegExp(`^${location}: I/O error during open: IO error: ${lock}: Input/output error`),
      );
      expect((outcome?.location as { file?: string }).file).toBe(lock);
    });
  });

  it("EIO reading CURRENT for the checks before open is StorageIOError naming it (the checks cannot run, so LevelDB does not open)", async () => {
    requireStrace();
    await withStore(5, async (location) => {
      const current = join(location, "CURRENT");
      const [outcome] = await underOpenFault(current, ["read", location, "1"]);
      expect(outcome?.name).toBe("StorageIOError");
      expect(outcome?.message).toContain(`${current}: cannot read the CURRENT file`);
      expect((outcome?.location as { file?: string }).file).toBe(current);
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
