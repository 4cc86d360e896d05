import { existsSync, readdirSync, readFileSync, rmSync, unlinkSync } from "node:fs";
import { join } from "node:path";
import { ClassicLevel } from "classic-level";
import { describe, expect, it } from "vitest";
import { StorageCorrupted } from "@durably/core";
import { StoreStorage, levelStore, openLevelStorage } from "../src/index.js";
import { tempDir } from "./backends.js";
import { spawnTs } from "./child.js";
import { openOnce, reopenAndRead, snapshot, writeCommits } from "./level-files.js";

/**
 * A database constructed, then something awaited, then passed to
 * levelStore, has opened itself with createIfMissing before Durably could
 * look at the directory. On a directory whose CURRENT was lost, LevelDB
 * then starts a new database and deletes the earlier one's tables and logs.
 * The data is gone by the time levelStore runs; what it must never do is
 * serve the empty database as the store.
 */

async function inTemp(run: (location: string) => Promise<void>): Promise<void> {
  const dir = tempDir();
  try {
    await run(join(dir, "db"));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** 40 commits in tables, reopened once (its MANIFEST is above 2), then CURRENT deleted. */
async function reopenedStoreWithoutCurrent(location: string): Promise<string> {
  await writeCommits(location, 40, { compact: true });
  await openOnce(location);
  unlinkSync(join(location, "CURRENT"));
  const manifest = readdirSync(location).find((name) => name.startsWith("MANIFEST-"));
  expect(manifest).toBeDefined();
  return manifest as string;
}

/** 40 commits in tables written by the store's only open (its MANIFEST is MANIFEST-000002), then CURRENT deleted. */
async function onceOpenedStoreWithoutCurrent(location: string): Promise<void> {
  await writeCommits(location, 40, { compact: true });
  expect(readdirSync(location)).toContain("MANIFEST-000002");
  unlinkSync(join(location, "CURRENT"));
}

const STRACE = process.env.STRACE_PATH ?? "/usr/bin/strace";

/** Runs the fault child under strace, the calls of `syscalls` on `files` numbered `when` (strace's syntax) failing with EIO; returns its outcome. */
async function underFaults(
  args: string[],
  files: string[],
  syscalls: string,
  when = "1",
): Promise<Record<string, unknown>> {
  if (!existsSync(STRACE))
    throw new Error(`strace not found at ${STRACE}: install it or set STRACE_PATH`);
  const child = spawnTs("./fixtures/fault-child.ts", args, {
    prefix: [
      STRACE,
      "-f",
      "-o",
      "/dev/null",
      ...files.flatMap((file) => ["-P", file]),
      "-e",
      `trace=${syscalls}`,
      "-e",
      `inject=${syscalls}:error=EIO:when=${when}`,
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

async function openError(open: Promise<StoreStorage>): Promise<StorageCorrupted> {
  const error = await open.then(
    async (storage) => {
      const entries = await storage.scanEntries({ conversationId: 1 as never }, 100);
      await storage.close();
      return new Error(`opened, serving ${entries.items.length} entries of 40 committed`);
    },
    (e: unknown) => e,
  );
  expect(error, String(error)).toBeInstanceOf(StorageCorrupted);
  return error as StorageCorrupted;
}

describe("levelStore on classic-level > a database that opened itself before levelStore", () => {
  it("constructed, then an await, then passed to levelStore, over a directory whose CURRENT was lost: StorageCorrupted naming the earlier MANIFEST LevelDB left, and the database is closed", async () => {
    await inTemp(async (location) => {
      const manifest = await reopenedStoreWithoutCurrent(location);
      const db = new ClassicLevel(location);
      // Any await lets the database's own deferred open start (createIfMissing: true).
      await Promise.resolve();
      const error = await openError(StoreStorage.open(levelStore(db)));
      expect(error.message).toContain(`${location}: LevelDB opened this directory by itself`);
      expect(error.message).toContain(`${manifest} is numbered above the current MANIFEST-000002`);
      expect(error.message).toContain("openLevelStorage(location, ClassicLevel)");
      expect(error.location.file).toBe(join(location, manifest));
      expect(db.status).toBe("closed");
    });
  });

  it("opened by its owner before levelStore, after the store's only open wrote its tables: StorageCorrupted naming the info log's account of the deleted tables", async () => {
    await inTemp(async (location) => {
      await onceOpenedStoreWithoutCurrent(location);
      const db = new ClassicLevel(location);
      await db.open();
      const error = await openError(StoreStorage.open(levelStore(db)));
      expect(error.message).toMatch(
        /LevelDB's info log LOG shows that the open which created the current database deleted table file\(s\) #\d+/,
      );
      expect(error.location.file).toBe(join(location, "LOG"));
      expect(db.status).toBe("closed");
    });
  });

  it("after such a refusal every later open is refused too, before LevelDB opens, and no file changes", async () => {
    await inTemp(async (location) => {
      for (const prepare of [reopenedStoreWithoutCurrent, onceOpenedStoreWithoutCurrent]) {
        rmSync(location, { recursive: true, force: true });
        await prepare(location);
        const db = new ClassicLevel(location);
        await db.open();
        await openError(StoreStorage.open(levelStore(db)));
        const after = snapshot(location);
        const again = await openError(openLevelStorage(location, ClassicLevel));
        expect(again.message).toContain(
          `${location}: an earlier open started a new, empty database over an earlier one in this directory`,
        );
        expect(again.message).toContain("Nothing was opened or changed");
        expect(snapshot(location)).toEqual(after);
      }
    });
  });

  it("a sublevel whose database opened itself over a directory whose CURRENT was lost is refused the same way", async () => {
    await inTemp(async (location) => {
      const manifest = await reopenedStoreWithoutCurrent(location);
      const root = new ClassicLevel(location);
      const error = await openError(StoreStorage.open(levelStore(root.sublevel("durably"))));
      expect(error.message).toContain(`${manifest} is numbered above the current MANIFEST-000002`);
      await root.close();
    });
  });

  it("a MANIFEST left by an open that failed before switching CURRENT (real EIO on the rename and on its removal) is no sign of a reset: the store opens with every commit", async () => {
    await inTemp(async (location) => {
      await writeCommits(location, 30, { compact: true });
      await openOnce(location);
      const current = readFileSync(join(location, "CURRENT"), "utf8").trimEnd();
      // strace -P matches a rename by its first path: the temporary file CURRENT is made from.
      const numbered = Array.from({ length: 40 }, (_x, i) => String(i + 1).padStart(6, "0"));
      const files = numbered.flatMap((n) => [`${n}.dbtmp`, `MANIFEST-${n}`]);
      const outcome = await underFaults(
        ["read", location, "1"],
        files.filter((name) => name !== current).map((name) => join(location, name)),
        "rename,renameat,renameat2,unlink,unlinkat",
        "1+",
      );
      expect(outcome.name, JSON.stringify(outcome)).toBe("StorageIOError");
      const left = readdirSync(location).filter((name) => name.startsWith("MANIFEST-"));
      expect(left.length, left.join(" ")).toBe(2);
      expect(readFileSync(join(location, "CURRENT"), "utf8").trimEnd()).toBe(current);
      expect(await reopenAndRead(location, 30)).toEqual({ prefix: 30 });
    });
  });

  it("a healthy store whose database opened itself before levelStore is used as it is, with every commit", async () => {
    await inTemp(async (location) => {
      await writeCommits(location, 30, { compact: true });
      await openOnce(location);
      const db = new ClassicLevel(location);
      await db.open();
      const storage = await StoreStorage.open(levelStore(db));
      const page = await storage.scanEntries({ conversationId: 1 as never }, 100);
      expect(page.items.length).toBe(30);
      await storage.close();
      expect(await reopenAndRead(location, 30)).toEqual({ prefix: 30 });
    });
  });
});

describe("openLevelStorage > Durably constructs the database, so it never opens unchecked", () => {
  it("refuses a directory whose CURRENT was lost whatever the caller awaited first, and changes no file", async () => {
    await inTemp(async (location) => {
      await reopenedStoreWithoutCurrent(location);
      const before = snapshot(location);
      await new Promise((resolve) => setTimeout(resolve, 10));
      const error = await openError(openLevelStorage(location, ClassicLevel));
      expect(error.message).toContain("no CURRENT file");
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(snapshot(location)).toEqual(before);
    });
  });

  it("creates a new store, reopens it with every commit, and takes levelStore's and StoreStorage's options", async () => {
    await inTemp(async (location) => {
      const storage = await openLevelStorage(location, ClassicLevel, {
        sync: true,
        cacheSize: 0,
      });
      expect(storage.capabilities.persistent).toBe(true);
      await storage.commit(
        [[{ type: "conversation", value: { id: 1 as never } }]],
        () => undefined,
      );
      await storage.close();
      const again = await openLevelStorage(location, ClassicLevel, { persistent: false });
      expect(again.capabilities.persistent).toBe(false);
      expect(await again.conversation(1 as never)).toEqual({ id: 1 });
      await again.close();
    });
  });
});
