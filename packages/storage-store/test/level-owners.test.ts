import { createHash } from "node:crypto";
import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  unlinkSync,
} from "node:fs";
import { basename, join, relative } from "node:path";
import { ClassicLevel } from "classic-level";
import { describe, expect, it } from "vitest";
import { StorageCorrupted, StorageLocked, StorageVersionError } from "@durably/core";
import { StoreStorage, levelStore, openLevelStorage } from "../src/index.js";
import { tempDir } from "./backends.js";
import { killed, spawnTs, waitForLine } from "./child.js";

// A second open of a directory in the process that owns it is refused before
// LevelDB is asked (level-owners): LevelDB's own refusal closes the LOCK file it
// opened again, which drops the owner's fcntl lock, and another process could
// then open the directory and write beside the owner.

interface Outcome {
  opened: boolean;
  name?: string;
  message?: string;
}

/** Runs test/fixtures/try-open.ts in a real child process: one open (and, if it opens, one commit). */
function tryOpenInChild(location: string, id = 99): Promise<Outcome> {
  const child = spawnTs("./fixtures/try-open.ts", [location, String(id)]);
  return new Promise((resolve, reject) => {
    let out = "";
    let err = "";
    child.stdout?.on("data", (chunk: Buffer) => (out += chunk.toString()));
    child.stderr?.on("data", (chunk: Buffer) => (err += chunk.toString()));
    child.once("exit", () => {
      const line = out.split("\n").find((l) => l.startsWith("{"));
      if (line === undefined) reject(new Error(`the child printed no outcome: ${err}`));
      else resolve(JSON.parse(line) as Outcome);
    });
  });
}

const commitConversation = (storage: StoreStorage, id: number) =>
  storage.commit([[{ type: "conversation", value: { id: id as never } }]], () => undefined);

/** Every file under `dir` with its size and a hash of its bytes. */
function snapshot(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (at: string) => {
    for (const entry of readdirSync(at, { withFileTypes: true })) {
      const path = join(at, entry.name);
      if (entry.isDirectory()) walk(path);
      else {
        const bytes = readFileSync(path);
        out[relative(dir, path)] =
          `${bytes.length}:${createHash("sha1").update(bytes).digest("hex")}`;
      }
    }
  };
  walk(dir);
  return out;
}

/**
 * Runs `fn` with `/proc/locks` readable (`shown`) or not, as the store's
 * checks reach it: through the `node:fs` module object they use.
 */
async function withLockTable<T>(shown: boolean, fn: () => Promise<T>): Promise<T> {
  if (shown) return fn();
  const fs = process.getBuiltinModule("node:fs");
  const read = fs.readFileSync;
  fs.readFileSync = ((path: unknown, ...rest: unknown[]) => {
    if (path === "/proc/locks") throw Object.assign(new Error("ENOENT"), { code: "ENOENT" });
    return (read as (...args: unknown[]) => unknown)(path, ...rest);
  }) as typeof fs.readFileSync;
  try {
    return await fn();
  } finally {
    fs.readFileSync = read;
  }
}

describe("levelStore > single owner within the process", () => {
  it("a second open in the owning process is refused with StorageLocked before LevelDB is asked; a child process still cannot open it; the owner's commits survive a reopen; after close it opens again", async () => {
    const dir = tempDir();
    const location = join(dir, "db");
    try {
      const owner = await openLevelStorage(location, ClassicLevel);
      await commitConversation(owner, 1);
      const info = readFileSync(join(location, "LOG"));

      const second = await openLevelStorage(location, ClassicLevel).catch((e: unknown) => e);
      expect(second).toBeInstanceOf(StorageLocked);
      expect((second as Error).message).toContain(
        `${location} is locked: this process already has it open`,
      );
      expect((second as Error).message).toContain("nothing was opened or changed");
      // LevelDB was not asked: its info log was not rotated.
      expect(existsSync(join(location, "LOG.old"))).toBe(false);
      expect(readFileSync(join(location, "LOG"))).toEqual(info);

      // The OS lock is still the owner's: a real second process is refused.
      const child = await tryOpenInChild(location, 7);
      expect(child).toMatchObject({ opened: false, name: "StorageLocked" });

      await commitConversation(owner, 2);
      await owner.close();

      const reopened = await openLevelStorage(location, ClassicLevel);
      expect(await reopened.conversation(1 as never)).toEqual({ id: 1 });
      expect(await reopened.conversation(2 as never)).toEqual({ id: 2 });
      expect(await reopened.conversation(7 as never)).toBeUndefined();
      await reopened.close();
      // Closed: a child opens it now.
      expect(await tryOpenInChild(location, 8)).toEqual({ opened: true });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("another spelling of the same directory (a symlink, a relative path through ..) is refused the same way", async () => {
    const dir = tempDir();
    const location = join(dir, "db");
    const link = join(dir, "link");
    try {
      const owner = await openLevelStorage(location, ClassicLevel);
      await commitConversation(owner, 1);
      symlinkSync(location, link);
      mkdirSync(join(dir, "sub"));
      const spellings = [
        link,
        `${location}/`,
        join(dir, "sub") + "/../db",
        relative(process.cwd(), location),
      ];
      for (const spelling of spellings) {
        const error = await openLevelStorage(spelling, ClassicLevel).catch((e: unknown) => e);
        expect(error, spelling).toBeInstanceOf(StorageLocked);
        expect((error as Error).message).toContain("this process already has it open");
      }
      // Also through levelStore on a database the caller constructed.
      const direct = await StoreStorage.open(levelStore(new ClassicLevel(link))).catch(
        (e: unknown) => e,
      );
      expect(direct).toBeInstanceOf(StorageLocked);
      expect(await tryOpenInChild(link)).toMatchObject({ opened: false, name: "StorageLocked" });
      await owner.close();
      const again = await openLevelStorage(link, ClassicLevel);
      expect(await again.conversation(1 as never)).toEqual({ id: 1 });
      await again.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("two opens of a directory that does not exist yet, started together: one creates it, the other is refused", async () => {
    const dir = tempDir();
    const location = join(dir, "new", "db");
    try {
      const outcomes = await Promise.allSettled([
        openLevelStorage(location, ClassicLevel),
        openLevelStorage(`${dir}/new/./db`, ClassicLevel),
      ]);
      const opened = outcomes.flatMap((o) => (o.status === "fulfilled" ? [o.value] : []));
      const refused = outcomes.flatMap((o) =>
        o.status === "rejected" ? [o.reason as unknown] : [],
      );
      expect(opened).toHaveLength(1);
      expect(refused).toHaveLength(1);
      expect(refused[0]).toBeInstanceOf(StorageLocked);
      const owner = opened[0] as StoreStorage;
      await commitConversation(owner, 1);
      expect(await tryOpenInChild(location)).toMatchObject({
        opened: false,
        name: "StorageLocked",
      });
      // Created meanwhile: its inode names it now, whatever the spelling.
      symlinkSync(join(dir, "new"), join(dir, "alias"));
      const error = await openLevelStorage(join(dir, "alias", "db"), ClassicLevel).catch(
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(StorageLocked);
      await owner.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  for (const [how, hidden, message] of [
    ["by its lock as /proc/locks shows it", false, /is locked: process \d+ has it open/],
    [
      "by LevelDB (no lock table to read, as on other systems)",
      true,
      /is locked: another process \(or instance\) has it open/,
    ],
  ] as const)
    it(`a failed open gives the directory back: refused ${how} while another process holds it, it opens once that process is gone`, async () => {
      const dir = tempDir();
      const location = join(dir, "db");
      const child = spawnTs("./fixtures/hold-open.ts", [location]);
      try {
        await waitForLine(child, "ready");
        const error = await withLockTable(!hidden, () =>
          openLevelStorage(location, ClassicLevel).catch((e: unknown) => e),
        );
        expect(error).toBeInstanceOf(StorageLocked);
        expect((error as Error).message).toMatch(message);
        await killed(child);
        const storage = await openLevelStorage(location, ClassicLevel);
        expect(await storage.conversation(1 as never)).toEqual({ id: 1 });
        await storage.close();
      } finally {
        await killed(child);
        rmSync(dir, { recursive: true, force: true });
      }
    });

  it("closing the database directly (not through the storage) gives the directory back too", async () => {
    const dir = tempDir();
    const location = join(dir, "db");
    try {
      const db = new ClassicLevel(location);
      const storage = await StoreStorage.open(levelStore(db));
      await db.close();
      const again = await openLevelStorage(location, ClassicLevel);
      await again.close();
      await storage.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("levelStore > a missing live write-ahead log", () => {
  it("is refused with StorageCorrupted naming the log and the MANIFEST that names it, and nothing in the directory changes; restored, the store opens with every commit", async () => {
    const dir = tempDir();
    const location = join(dir, "db");
    try {
      const storage = await openLevelStorage(location, ClassicLevel);
      for (let id = 1; id <= 5; id++) await commitConversation(storage, id);
      await storage.close();
      const log = readdirSync(location).find((name) => name.endsWith(".log")) as string;
      const manifest = readFileSync(join(location, "CURRENT"), "utf8").trim();
      const saved = readFileSync(join(location, log));
      expect(saved.length).toBeGreaterThan(0);
      unlinkSync(join(location, log));
      const before = snapshot(location);

      const error = await openLevelStorage(location, ClassicLevel).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(StorageCorrupted);
      const message = (error as Error).message;
      expect(message).toContain(`${join(location, log)}: the write-ahead log is missing`);
      expect(message).toContain(`${join(location, manifest)} names it as its live write-ahead log`);
      expect(message).toContain("Nothing was opened or changed");
      expect((error as StorageCorrupted).location).toEqual({ file: join(location, log) });
      expect(snapshot(location)).toEqual(before);

      // Put back, the store opens with all five commits.
      const { writeFileSync } = await import("node:fs");
      writeFileSync(join(location, log), saved);
      const reopened = await openLevelStorage(location, ClassicLevel);
      for (let id = 1; id <= 5; id++)
        expect(await reopened.conversation(id as never)).toEqual({ id });
      await reopened.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("a live log that cannot be read (a directory in its place) fails the open with StorageIOError naming it", async () => {
    const dir = tempDir();
    const location = join(dir, "db");
    try {
      const storage = await openLevelStorage(location, ClassicLevel);
      await commitConversation(storage, 1);
      await storage.close();
      const log = readdirSync(location).find((name) => name.endsWith(".log")) as string;
      unlinkSync(join(location, log));
      mkdirSync(join(location, log));
      const before = snapshot(location);
      const error = await openLevelStorage(location, ClassicLevel).catch((e: unknown) => e);
      expect((error as Error).name).toBe("StorageIOError");
      expect((error as Error).message).toContain(
        `${join(location, log)}: cannot read the write-ahead log`,
      );
      expect(snapshot(location)).toEqual(before);
      expect(statSync(join(location, log)).isDirectory()).toBe(true);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("healthy directories are not refused: new, reopened many times, and left by a SIGKILLed owner", async () => {
    const dir = tempDir();
    const location = join(dir, "db");
    const child = spawnTs("./fixtures/hold-open.ts", [location]);
    try {
      await waitForLine(child, "ready");
      await killed(child);
      for (let round = 0; round < 4; round++) {
        const storage = await openLevelStorage(location, ClassicLevel);
        await commitConversation(storage, 10 + round);
        await storage.close();
      }
      const storage = await openLevelStorage(location, ClassicLevel);
      expect(await storage.conversation(1 as never)).toEqual({ id: 1 });
      expect(await storage.conversation(13 as never)).toEqual({ id: 13 });
      await storage.close();
      expect(basename(location)).toBe("db");
    } finally {
      await killed(child);
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("levelStore > a store refused after LevelDB opened it", () => {
  it("format 1 says what LevelDB rewrote and where the copy of the log is, and the keys are intact", async () => {
    const dir = tempDir();
    const location = join(dir, "db");
    try {
      const raw = new ClassicLevel(location);
      await raw.batch([
        { type: "put", key: "m/format", value: "1" },
        { type: "put", key: "c/0000000000000001", value: '{"id":1}' },
      ]);
      await raw.close();
      const log = readdirSync(location).find((name) => name.endsWith(".log")) as string;
      const error = await openLevelStorage(location, ClassicLevel).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(StorageVersionError);
      const message = (error as Error).message;
      expect(message).not.toContain("Nothing was changed");
      expect(message).toContain(
        `Nothing was written to the store, but LevelDB opened the directory before its keys could be read`,
      );
      expect(message).toContain(`it replayed the write-ahead log ${log} into a table file`);
      expect(message).toContain(
        `A copy of ${log} as it was before the open is kept in ${join(location, "durably-recovery")}`,
      );
      expect(existsSync(join(location, "durably-recovery", log))).toBe(true);
      const again = new ClassicLevel(location);
      expect(await again.get("m/format")).toBe("1");
      expect(await again.get("c/0000000000000001")).toBe('{"id":1}');
      await again.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("a LevelDB database that is not a Durably store says the same", async () => {
    const dir = tempDir();
    const location = join(dir, "db");
    try {
      const raw = new ClassicLevel(location);
      await raw.put("user:1", "a");
      await raw.close();
      const error = await openLevelStorage(location, ClassicLevel).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(StorageCorrupted);
      expect((error as Error).message).toMatch(
        /not a Durably store\. Nothing was written to the store, but LevelDB opened the directory/,
      );
      expect((error as Error).message).toContain(join(location, "durably-recovery"));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
