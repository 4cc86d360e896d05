import { existsSync, statSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { ConversationId, DocumentId, EntryId, StorageWrite } from "@durably/core";
import { openSqliteStorage, type SqliteStorage } from "../src/index.js";
import { WAL_SIZE_LIMIT } from "../src/ownership.js";
import { tempDir } from "./helpers.js";

const C = 1 as ConversationId;
const MiB = 1024 * 1024;
const DOC = 2 as DocumentId;

let dir: ReturnType<typeof tempDir>;
let path: string;
let storage: SqliteStorage;

beforeEach(async () => {
  dir = tempDir("durably-sqlite-footprint-");
  path = join(dir.dir, "footprint.sqlite");
  storage = await openSqliteStorage(path);
  await storage.commit(
    [
      [
        { type: "conversation", value: { id: C } },
        {
          type: "document.create",
          record: { id: DOC, kind: "state", scope: { kind: "conversation", conversationId: C } },
          content: { kind: "base", version: 1, value: { text: "" } },
        },
      ],
    ],
    () => {},
  );
});
afterEach(async () => {
  await storage.close();
  dir.cleanup();
});

const size = (file: string) => (existsSync(file) ? statSync(file).size : 0);
const walSize = () => size(`${path}-wal`);

/** A new base of about `bytes` for the current-only document: its previous base is reclaimed. */
const bigBase = (bytes: number, round: number): StorageWrite => ({
  type: "document.change",
  id: DOC,
  content: { kind: "base", version: 1, value: { text: String(round).padEnd(bytes, "z") } },
});

let nextEntry = 100;
async function smallCommit(): Promise<void> {
  const id = nextEntry++ as EntryId;
  await storage.commit(
    [
      [
        { type: "entry", value: { id, conversationId: C, kind: "note", data: "x".repeat(200) } },
        {
          type: "document.change",
          id: DOC,
          content: { kind: "delta", version: 1, ops: [["a", ["text"], "y"]] },
        },
      ],
    ],
    () => {},
  );
}

describe("disk footprint: freed pages are reused, the WAL stays bounded and is gone after close", () => {
  it("replacing a 1 MiB base 30 times reuses the freed pages: the file stays near one base, not thirty", async () => {
    for (let round = 0; round < 30; round++)
      await storage.commit([[bigBase(MiB, round)]], () => {});
    await storage.close();
    // About two bases at most: the new one is written before the old one's pages are freed.
    expect(size(path)).toBeLessThan(3 * MiB);
    const raw = new Database(path, { readonly: true });
    const revisions = raw
      .prepare("SELECT count(*) AS n FROM document_revisions WHERE document_id = ?")
      .get(DOC);
    raw.close();
    expect(revisions).toEqual({ n: 1 });
    storage = await openSqliteStorage(path);
    const doc = await storage.document(DOC, "current");
    expect((doc?.value as { text: string }).text.startsWith("29zzz")).toBe(true);
  });

  it("under 3000 steady commits the WAL never grows past about 4 MiB (SQLite's automatic checkpoint restarts it)", async () => {
    let largest = 0;
    for (let i = 0; i < 3000; i++) {
      await smallCommit();
      largest = Math.max(largest, walSize());
    }
    expect(largest).toBeGreaterThan(0);
    expect(largest).toBeLessThan(4.5 * MiB);
  });

  it("after one commit larger than the WAL limit, the next commit cuts the WAL back to the limit", async () => {
    await storage.commit([[bigBase(12 * MiB, 1)]], () => {});
    expect(walSize()).toBeGreaterThan(12 * MiB);
    await smallCommit();
    await smallCommit();
    expect(walSize()).toBeLessThanOrEqual(WAL_SIZE_LIMIT);
    expect(WAL_SIZE_LIMIT).toBe(8 * MiB);
  });

  it("close checkpoints everything into the file and removes the WAL", async () => {
    for (let i = 0; i < 50; i++) await smallCommit();
    expect(walSize()).toBeGreaterThan(0);
    await storage.close();
    expect(existsSync(`${path}-wal`)).toBe(false);
    const raw = new Database(path, { readonly: true });
    expect(raw.prepare("SELECT count(*) AS n FROM entries").get()).toEqual({ n: 50 });
    raw.close();
    storage = await openSqliteStorage(path);
  });
});
