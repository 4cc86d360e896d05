import { mkdirSync, rmSync, unlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ClassicLevel } from "classic-level";
import { describe, expect, it } from "vitest";
import { StorageCorrupted } from "@durably/core";
import { StoreStorage, levelStore } from "../src/index.js";
import { tempDir } from "./backends.js";
import { A, openOnce, reopenAndRead, snapshot, writeCommits } from "./level-files.js";

/** A temp dir with a LevelDB location inside; removed after `run`. */
async function inTemp(run: (location: string) => Promise<void>): Promise<void> {
  const dir = tempDir();
  try {
    await run(join(dir, "db"));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe("levelStore on classic-level > a directory without CURRENT", () => {
  it("refuses a store directory whose CURRENT is missing with StorageCorrupted naming it, and leaves every file byte-identical", async () => {
    await inTemp(async (location) => {
      await writeCommits(location, 40, { compact: true });
      await openOnce(location); // a fresh log next to the tables
      unlinkSync(join(location, "CURRENT"));
      const before = snapshot(location);
      expect([...before.keys()].some((f) => f.endsWith(".ldb"))).toBe(true);

      const error = await StoreStorage.open(levelStore(new ClassicLevel(location))).catch(
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(StorageCorrupted);
      expect((error as Error).message).toContain(location);
      expect((error as Error).message).toContain("no CURRENT file");
      expect((error as StorageCorrupted).location.file).toBe(join(location, "CURRENT"));
      // Give a deferred open (had it been started) time to run: nothing may change.
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(snapshot(location)).toEqual(before);
    });
  });

  it("still refuses, untouched, when the database was built with createIfMissing in its options", async () => {
    await inTemp(async (location) => {
      await writeCommits(location, 5);
      unlinkSync(join(location, "CURRENT"));
      const before = snapshot(location);
      const db = new ClassicLevel(location, { createIfMissing: true });
      await expect(StoreStorage.open(levelStore(db))).rejects.toBeInstanceOf(StorageCorrupted);
      expect(db.status).toBe("closed");
      expect(snapshot(location)).toEqual(before);
    });
  });

  it("refuses a directory of unrelated files rather than starting a database among them", async () => {
    await inTemp(async (location) => {
      mkdirSync(location);
      writeFileSync(join(location, "notes.txt"), "mine");
      const error = await StoreStorage.open(levelStore(new ClassicLevel(location))).catch(
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(StorageCorrupted);
      expect((error as Error).message).toContain("notes.txt");
      expect(snapshot(location)).toEqual(new Map([["notes.txt", Buffer.from("mine")]]));
    });
  });

  it("creates a new store where nothing exists, and in an empty directory", async () => {
    await inTemp(async (location) => {
      for (const where of [join(location, "absent"), join(location, "empty")]) {
        if (where.endsWith("empty")) mkdirSync(where, { recursive: true });
        const storage = await StoreStorage.open(levelStore(new ClassicLevel(where)));
        await storage.commit([[{ type: "conversation", value: { id: A } }]], () => undefined);
        await storage.close();
        const again = await StoreStorage.open(levelStore(new ClassicLevel(where)));
        expect(await again.conversation(A)).toEqual({ id: A });
        await again.close();
      }
    });
  });

  it("reopens an existing store with every commit", async () => {
    await inTemp(async (location) => {
      await writeCommits(location, 30, { compact: true });
      await openOnce(location);
      expect(await reopenAndRead(location, 30)).toEqual({ prefix: 30 });
    });
  });
});
