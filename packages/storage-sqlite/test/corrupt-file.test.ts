import { closeSync, openSync, writeSync } from "node:fs";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import {
  StorageCorrupted,
  type ConversationId,
  type DocumentId,
  type EntryId,
  type StorageWrite,
} from "@durably/core";
import { openSqliteStorage, type SqliteStorage } from "../src/index.js";
import { databasePerTest } from "./helpers.js";

const C = 1 as ConversationId;
const ENTRIES = 400;

const database = databasePerTest("damaged.sqlite", (writer) => {
  const entries: StorageWrite[] = Array.from({ length: ENTRIES }, (_, i) => ({
    type: "entry",
    value: { id: (i + 2) as EntryId, conversationId: C, kind: "note", data: "x".repeat(300) },
  }));
  const document: StorageWrite = {
    type: "document.create",
    record: { id: 1000 as DocumentId, kind: "notes", scope: { kind: "session" } },
    content: { kind: "base", version: 1, value: { text: "y".repeat(5000) } },
  };
  return writer.commit(
    [[{ type: "conversation", value: { id: C } }, ...entries, document]],
    () => {},
  );
});
let storage: SqliteStorage | undefined;
afterEach(async () => {
  await storage?.close();
  storage = undefined;
});

/** Page numbers of a table's b-tree, from SQLite's own `dbstat` view of the closed file. */
function pagesOf(table: string): { root: number; leaves: number[]; pageSize: number } {
  const db = new Database(database.path, { readonly: true });
  const root = (
    db.prepare("SELECT rootpage FROM sqlite_master WHERE name = ?").get(table) as {
      rootpage: number;
    }
  ).rootpage;
  const leaves = (
    db
      .prepare("SELECT pageno FROM dbstat WHERE name = ? AND pagetype = 'leaf' ORDER BY pageno")
      .all(table) as { pageno: number }[]
  ).map((r) => r.pageno);
  const pageSize = db.pragma("page_size", { simple: true }) as number;
  db.close();
  return { root, leaves, pageSize };
}

/** Overwrites one whole page of the real file with garbage, as a bad sector or a stray write would. */
function smashPage(page: number, pageSize: number): void {
  const fd = openSync(database.path, "r+");
  writeSync(fd, Buffer.alloc(pageSize, 0xab), 0, pageSize, (page - 1) * pageSize);
  closeSync(fd);
}

async function failure(work: () => Promise<unknown>): Promise<StorageCorrupted> {
  const error = await work().then(
    (value) => new Error(`expected StorageCorrupted, got a result: ${JSON.stringify(value)}`),
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(StorageCorrupted);
  const corrupted = error as StorageCorrupted;
  expect((corrupted.cause as { code?: string }).code).toMatch(/^SQLITE_(CORRUPT|NOTADB)/);
  expect(corrupted.message).toContain(database.path);
  return corrupted;
}

/** Opens without the structural check, so the damage is met by the read or commit under test. */
const openUnchecked = () => openSqliteStorage(database.path, { openCheck: "none" });

describe("SQLite's own corruption errors come out as StorageCorrupted naming the place", () => {
  it("a smashed leaf page of the entries fails the default open with StorageCorrupted naming the file and the check", async () => {
    const { leaves, pageSize } = pagesOf("entries");
    smashPage(leaves[Math.floor(leaves.length / 2)] as number, pageSize);
    const error = await openSqliteStorage(database.path).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StorageCorrupted);
    expect((error as StorageCorrupted).message).toContain(database.path);
    expect((error as StorageCorrupted).message).toMatch(/quick_check/);
    // SQLite stops at a page this broken without saying whose it is: the file is named, not the table.
    expect((error as StorageCorrupted).location).toMatchObject({ file: database.path });
  });

  it("a smashed root page of the entries table fails entry(id) with StorageCorrupted naming the file, table entries and the id", async () => {
    const { root, pageSize } = pagesOf("entries");
    smashPage(root, pageSize);
    storage = await openUnchecked();
    const error = await failure(() => storage!.entry(42 as EntryId));
    expect(error.location).toEqual({ file: database.path, table: "entries", key: "42" });
    expect(error.message).toMatch(/table entries, key 42/);
  });

  it("a smashed leaf page in the middle of the entries fails the scan that reaches it, naming the file and table", async () => {
    const { leaves, pageSize } = pagesOf("entries");
    expect(leaves.length).toBeGreaterThan(10);
    smashPage(leaves[Math.floor(leaves.length / 2)] as number, pageSize);
    storage = await openUnchecked();
    const error = await failure(async () => {
      let page = await storage!.scanEntries({ conversationId: C }, 50);
      while (page.next !== undefined)
        page = await storage!.scanEntries({ conversationId: C }, 50, page.next);
      return page;
    });
    expect(error.location).toEqual({ file: database.path, table: "entries" });
  });

  it("a smashed page of the document revisions fails document(id) with StorageCorrupted naming the document", async () => {
    const { root, pageSize } = pagesOf("document_revisions");
    smashPage(root, pageSize);
    storage = await openUnchecked();
    const error = await failure(() => storage!.document(1000 as DocumentId, "current"));
    expect(error.location).toEqual({ file: database.path, table: "documents", key: "1000" });
  });

  it("a smashed page met inside a commit rejects the commit with StorageCorrupted, and the file keeps nothing of it", async () => {
    const { root, pageSize } = pagesOf("conversations");
    smashPage(root, pageSize);
    storage = await openUnchecked();
    const write: StorageWrite = {
      type: "entry",
      value: { id: 5000 as EntryId, conversationId: C, kind: "note" },
    };
    const error = await failure(() => storage!.commit([[write]], () => {}));
    expect(error.location).toEqual({ file: database.path });
    await storage.close();
    storage = undefined;
    const raw = new Database(database.path, { readonly: true });
    expect(raw.prepare("SELECT count(*) AS n FROM entries WHERE id = 5000").get()).toEqual({
      n: 0,
    });
    raw.close();
  });

  it("a smashed counters page fails open with StorageCorrupted naming the file, and open leaves the file as it was", async () => {
    const { root, pageSize } = pagesOf("tips");
    smashPage(root, pageSize);
    const error = await failure(() => openSqliteStorage(database.path));
    expect(error.location).toMatchObject({ file: database.path });
    // The failed open let go of the file.
    const raw = new Database(database.path);
    expect(raw.prepare("SELECT count(*) AS n FROM entries").get()).toEqual({ n: ENTRIES });
    raw.close();
  });

  it("a file whose header page is smashed fails open with StorageCorrupted naming the file", async () => {
    smashPage(1, pagesOf("entries").pageSize);
    const error = await failure(() => openSqliteStorage(database.path));
    expect(error.location).toEqual({ file: database.path });
  });
});
