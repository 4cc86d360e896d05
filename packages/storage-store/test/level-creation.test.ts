import { copyFileSync, existsSync, mkdirSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ClassicLevel } from "classic-level";
import { describe, expect, it } from "vitest";
import { StorageCorrupted } from "@durably/core";
import { StoreStorage, levelStore } from "../src/index.js";
import { tempDir } from "./backends.js";
import { spawnTs } from "./child.js";
import { A, damage, snapshot, writeCommits } from "./level-files.js";

/**
 * LevelDB creates a database in two steps: MANIFEST-000001, then CURRENT
 * (written as 000001.dbtmp, synced, renamed). A fault in the second step
 * leaves MANIFEST-000001 without CURRENT: a directory that never held data,
 * which must open as a new store, not be refused forever. Anything that may
 * be data is still refused, saying what was found.
 */

const STRACE = process.env.STRACE_PATH ?? "/usr/bin/strace";

async function inTemp(run: (location: string) => Promise<void>): Promise<void> {
  const dir = tempDir();
  try {
    await run(join(dir, "db"));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Creates a store at `location` in a child under strace: the first `syscalls` call on `file` fails with EIO. Returns the child's outcome. */
async function createUnderFault(
  location: string,
  file: string,
  syscalls: string,
): Promise<Record<string, unknown>> {
  if (!existsSync(STRACE))
    throw new Error(`strace not found at ${STRACE}: install it or set STRACE_PATH`);
  const child = spawnTs("./fixtures/fault-child.ts", ["read", location, "1"], {
    prefix: [
      STRACE,
      "-f",
      "-o",
      "/dev/null",
      "-P",
      file,
      "-e",
      `trace=${syscalls}`,
      "-e",
      `inject=${syscalls}:error=EIO:when=1`,
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

async function storesAndReopens(location: string): Promise<void> {
  const storage = await StoreStorage.open(levelStore(new ClassicLevel(location)));
  await storage.commit([[{ type: "conversation", value: { id: A } }]], () => undefined);
  await storage.close();
  const again = await StoreStorage.open(levelStore(new ClassicLevel(location)));
  expect(await again.conversation(A)).toEqual({ id: A });
  await again.close();
}

async function refusal(location: string): Promise<StorageCorrupted> {
  const error = await StoreStorage.open(levelStore(new ClassicLevel(location))).catch(
    (e: unknown) => e,
  );
  expect(error, String(error)).toBeInstanceOf(StorageCorrupted);
  return error as StorageCorrupted;
}

describe("levelStore on classic-level > a fault while LevelDB creates the database (real EIO with strace)", () => {
  const faults = [
    { what: "the write of CURRENT's temporary file", syscalls: "write,pwrite64,writev" },
    { what: "the sync of CURRENT's temporary file", syscalls: "fsync,fdatasync" },
    { what: "the rename of CURRENT's temporary file", syscalls: "rename,renameat,renameat2" },
  ];
  for (const { what, syscalls } of faults)
    it(`EIO from ${what} fails the first open (StorageIOError); the directory, MANIFEST-000001 without CURRENT, then opens as a new store`, async () => {
      await inTemp(async (location) => {
        const temp = join(location, "000001.dbtmp");
        const outcome = await createUnderFault(location, temp, syscalls);
        expect(outcome.name, JSON.stringify(outcome)).toBe("StorageIOError");
        const left = readdirSync(location);
        expect(left).toContain("MANIFEST-000001");
        expect(left).not.toContain("CURRENT");
        await storesAndReopens(location);
      });
    });
});

describe("levelStore on classic-level > a directory without CURRENT that may hold data is still refused", () => {
  /** What a failed creation leaves, made by LevelDB itself: MANIFEST-000001 without CURRENT. */
  async function failedCreation(location: string): Promise<void> {
    await createUnderFault(location, join(location, "000001.dbtmp"), "fsync,fdatasync");
    expect(readdirSync(location)).toContain("MANIFEST-000001");
  }

  it("a file besides what a failed creation leaves: refused, naming the file, nothing changed", async () => {
    await inTemp(async (location) => {
      await failedCreation(location);
      writeFileSync(join(location, "000003.log"), "");
      const before = snapshot(location);
      const error = await refusal(location);
      expect(error.message).toContain(
        "it is not what a failed creation of a database leaves either (000003.log is not a file LevelDB writes before CURRENT)",
      );
      expect(error.location.file).toBe(join(location, "CURRENT"));
      expect(snapshot(location)).toEqual(before);
    });
  });

  it("a damaged MANIFEST-000001: refused, naming the damaged record", async () => {
    await inTemp(async (location) => {
      await failedCreation(location);
      damage(join(location, "MANIFEST-000001"), "flip", 10, 0);
      const before = snapshot(location);
      const error = await refusal(location);
      expect(error.message).toMatch(/MANIFEST-000001 has a damaged record at byte 0/);
      expect(snapshot(location)).toEqual(before);
    });
  });

  it("a MANIFEST-000001 that records a table file (a database's MANIFEST under that name): refused, saying so and how to restore CURRENT", async () => {
    await inTemp(async (location) => {
      const source = `${location}-source`;
      await writeCommits(source, 20, { compact: true });
      mkdirSync(location);
      copyFileSync(join(source, "MANIFEST-000002"), join(location, "MANIFEST-000001"));
      const before = snapshot(location);
      const error = await refusal(location);
      expect(error.message).toMatch(/MANIFEST-000001 records 1 table file\(s\)/);
      expect(error.message).toContain("printf 'MANIFEST-000001\\n' > CURRENT");
      expect(snapshot(location)).toEqual(before);
    });
  });
});
