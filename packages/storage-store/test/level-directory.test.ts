import { mkdirSync, readFileSync, rmSync, unlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ClassicLevel } from "classic-level";
import { describe, expect, it } from "vitest";
import { StorageCorrupted } from "@durably/core";
import { StoreStorage, levelStore } from "../src/index.js";
import { tempDir } from "./backends.js";
import { A, damage, openOnce, reopenAndRead, snapshot, writeCommits } from "./level-files.js";

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

describe("levelStore on classic-level > a damaged CURRENT", () => {
  /** A store of 30 commits in tables and a fresh log; returns the MANIFEST name CURRENT holds. */
  async function storeWithCurrent(location: string): Promise<string> {
    await writeCommits(location, 30, { compact: true });
    await openOnce(location);
    return readFileSync(join(location, "CURRENT"), "utf8").trimEnd();
  }

  async function refusal(location: string): Promise<StorageCorrupted> {
    const error = await StoreStorage.open(levelStore(new ClassicLevel(location))).catch(
      (e: unknown) => e,
    );
    expect(error, String(error)).toBeInstanceOf(StorageCorrupted);
    return error as StorageCorrupted;
  }

  it("a flipped bit in CURRENT is StorageCorrupted naming CURRENT, every file byte-identical; writing back the MANIFEST name it suggests opens every commit", async () => {
    await inTemp(async (location) => {
      const manifest = await storeWithCurrent(location);
      const current = join(location, "CURRENT");
      // Bit 3 of the "-" in "MANIFEST-": "MANIFEST%000004".
      damage(current, "flip", 8, 3);
      expect(readFileSync(current, "utf8")).toBe(`${manifest.replace("-", "%")}\n`);
      const before = snapshot(location);

      const error = await refusal(location);
      expect(error.location.file).toBe(current);
      expect(error.message).toContain(
        `${current}: CURRENT should hold the name of the current MANIFEST`,
      );
      expect(error.message).toContain(JSON.stringify(`${manifest.replace("-", "%")}\n`));
      expect(error.message).toContain(`printf '${manifest}\\n' > CURRENT`);
      expect(snapshot(location)).toEqual(before);

      writeFileSync(current, `${manifest}\n`);
      expect(await reopenAndRead(location, 30)).toEqual({ prefix: 30 });
    });
  });

  it("a CURRENT without its newline is StorageCorrupted naming CURRENT, nothing opened", async () => {
    await inTemp(async (location) => {
      const manifest = await storeWithCurrent(location);
      const current = join(location, "CURRENT");
      writeFileSync(current, manifest);
      const before = snapshot(location);
      const error = await refusal(location);
      expect(error.location.file).toBe(current);
      expect(error.message).toContain(JSON.stringify(manifest));
      expect(snapshot(location)).toEqual(before);
    });
  });

  it("a CURRENT naming a MANIFEST the directory lacks is StorageCorrupted naming CURRENT and the MANIFEST the directory holds", async () => {
    await inTemp(async (location) => {
      const manifest = await storeWithCurrent(location);
      const current = join(location, "CURRENT");
      writeFileSync(current, "MANIFEST-000099\n");
      const before = snapshot(location);
      const error = await refusal(location);
      expect(error.location.file).toBe(current);
      expect(error.message).toContain(
        `${current}: CURRENT names MANIFEST-000099, which is not in the directory (it holds ${manifest})`,
      );
      expect(snapshot(location)).toEqual(before);
    });
  });
});
