import { join } from "node:path";
import { existsSync, rmSync } from "node:fs";
import { ClassicLevel } from "classic-level";
import { MemoryLevel } from "memory-level";
import { describe, expect, it } from "vitest";
import { StorageLocked } from "@durably/core";
import { StoreStorage, levelStore } from "../src/index.js";
import { encodingOptions } from "../src/level-store.js";
import { tempDir } from "./backends.js";
import { killed, spawnTs, waitForLine } from "./child.js";

describe("levelStore > adapting abstract-level", () => {
  it("opens a database that is not open yet, and its close() closes the database", async () => {
    const db = new MemoryLevel();
    const storage = await StoreStorage.open(levelStore(db));
    expect(db.status).toBe("open");
    expect(storage.capabilities.persistent).toBe(false);
    await storage.close();
    expect(db.status).toBe("closed");
    await storage.close();
  });

  it("accepts a database that is already open", async () => {
    const dir = tempDir();
    try {
      const db = new ClassicLevel(join(dir, "db"));
      await db.open();
      const storage = await StoreStorage.open(levelStore(db));
      expect(storage.capabilities.persistent).toBe(true);
      await storage.commit(
        [[{ type: "conversation", value: { id: 1 as never } }]],
        () => undefined,
      );
      // Stored framed: an 8-digit checksum, then the record.
      expect(await db.get("c/0000000000000001")).toMatch(/^[0-9a-f]{8}\{"id":1\}$/);
      await storage.close();
      expect(db.status).toBe("closed");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("takes its persistence from the database's manifest, overridable by option", () => {
    expect(levelStore(new MemoryLevel()).persistent).toBe(false);
    expect(levelStore(new MemoryLevel(), { persistent: true }).persistent).toBe(true);
  });

  it("runs on a sublevel, so a Durably store can share a database", async () => {
    const db = new MemoryLevel();
    await db.put("app/own", "x");
    const storage = await StoreStorage.open(levelStore(db.sublevel("durably")));
    await storage.commit([[{ type: "conversation", value: { id: 1 as never } }]], () => undefined);
    expect(await storage.conversation(1 as never)).toEqual({ id: 1 });
    expect(await db.get("app/own")).toBe("x");
    await storage.close();
    await db.close();
  });
});

describe("levelStore > encodings", () => {
  it("passes no encoding options to a database whose defaults are utf8, and utf8 to any other", () => {
    const dir = tempDir();
    try {
      const memory = new MemoryLevel();
      expect(encodingOptions(new ClassicLevel(join(dir, "plain")))).toEqual({});
      expect(encodingOptions(memory)).toEqual({});
      expect(encodingOptions(memory.sublevel("durably"))).toEqual({});
      const utf8 = { keyEncoding: "utf8", valueEncoding: "utf8" };
      expect(
        encodingOptions(new ClassicLevel(join(dir, "json"), { valueEncoding: "json" })),
      ).toEqual(utf8);
      expect(encodingOptions(new MemoryLevel({ keyEncoding: "buffer" }))).toEqual(utf8);
      // A database without abstract-level's encoding methods gets the options spelled out.
      expect(encodingOptions({ ...memory, keyEncoding: undefined } as never)).toEqual(utf8);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("stores utf8 text in a database with other default encodings, readable after a reopen with the defaults", async () => {
    const dir = tempDir();
    const location = join(dir, "db");
    try {
      const storage = await StoreStorage.open(
        levelStore(
          new ClassicLevel<Uint8Array, unknown>(location, {
            keyEncoding: "buffer",
            valueEncoding: "json",
          }),
        ),
      );
      const conversation = { id: 1 as never };
      const entry = {
        id: 2 as never,
        conversationId: 1 as never,
        kind: "note",
        data: { text: "é ✓" },
      };
      const stored = await storage.commit(
        [
          [
            { type: "conversation", value: conversation },
            { type: "entry", value: entry },
          ],
        ],
        () => undefined,
      );
      expect(stored.refused).toBeUndefined();
      await storage.close();

      const plain = new ClassicLevel(location);
      await plain.open();
      expect(await plain.get("c/0000000000000001")).toMatch(/^[0-9a-f]{8}\{"id":1\}$/);
      await plain.close();
      const reopened = await StoreStorage.open(levelStore(new ClassicLevel(location)));
      expect(await reopened.conversation(1 as never)).toEqual(conversation);
      expect((await reopened.entry(2 as never))?.entry).toEqual(entry);
      await reopened.close();
      // Ranges (open's chain check, scans) read utf8 text from such a database too.
      const again = await StoreStorage.open(
        levelStore(
          new ClassicLevel<Uint8Array, unknown>(location, {
            keyEncoding: "buffer",
            valueEncoding: "json",
          }),
        ),
      );
      const page = await again.scanEntries({ conversationId: 1 as never }, 10);
      expect(page.items).toEqual([entry]);
      await again.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("levelStore > single owner (LevelDB LOCK)", () => {
  it("a second process gets StorageLocked naming the location; after SIGKILL of the owner a reopen succeeds at once", async () => {
    const dir = tempDir();
    const location = join(dir, "db");
    const child = spawnTs("./fixtures/hold-open.ts", [location]);
    try {
      await waitForLine(child, "ready");
      const error = await StoreStorage.open(levelStore(new ClassicLevel(location))).catch(
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(StorageLocked);
      expect((error as Error).message).toContain(location);
      // The copy of the owner's live log made before the refused open is not left behind.
      expect(existsSync(join(location, "durably-recovery"))).toBe(false);
      await killed(child);
      const storage = await StoreStorage.open(levelStore(new ClassicLevel(location)));
      expect(await storage.conversation(1 as never)).toEqual({ id: 1 });
      await storage.close();
    } finally {
      await killed(child);
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
