import { writeFileSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { StorageCorrupted, StorageVersionError, type ConversationId } from "@durably/core";
import { BetterSqlite3Database, openSqliteStorage, SCHEMA_VERSION } from "../src/index.js";
import { migrate } from "../src/schema.js";
import { tempDir } from "./helpers.js";

const TABLES = [
  "conversations",
  "document_revisions",
  "documents",
  "entries",
  "ids",
  "metadata",
  "migrations",
  "submissions",
  "tasks",
];

let dir: ReturnType<typeof tempDir>;
let path: string;
beforeEach(() => {
  dir = tempDir();
  path = join(dir.dir, "schema.sqlite");
});
afterEach(() => dir.cleanup());

function columns(db: Database.Database, table: string): string[] {
  return db
    .prepare(`SELECT name FROM pragma_table_info(?)`)
    .all(table)
    .map((r) => (r as { name: string }).name);
}

describe("schema and migrations", () => {
  it("creates the nine tables, with entries and document_revisions shaped as documented, at version 2", async () => {
    const storage = await openSqliteStorage(path);
    await storage.close();
    const db = new Database(path, { readonly: true });
    const tables = db
      .prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
      .all();
    expect(tables.map((t) => (t as { name: string }).name)).toEqual(TABLES);
    expect(columns(db, "entries")).toEqual(["id", "conversation_id", "commit_seq", "record"]);
    expect(columns(db, "document_revisions").slice(0, 4)).toEqual([
      "document_id",
      "seq",
      "kind",
      "content",
    ]);
    expect(db.prepare("SELECT version FROM migrations ORDER BY version").all()).toEqual([
      { version: 1 },
      { version: 2 },
    ]);
    expect(SCHEMA_VERSION).toBe(2);
    expect(db.pragma("journal_mode", { simple: true })).toBe("wal");
    db.close();
  });

  it("migrates a version-1 file forward to version 2 in one transaction, keeping its data", async () => {
    const old = new Database(path);
    new BetterSqlite3Database(old).transactionSync((tx) => migrate(tx, path, 1));
    old
      .prepare(
        "INSERT INTO conversations (id, owner_task_id, record) VALUES (1, NULL, '{\"id\":1}')",
      )
      .run();
    expect(
      old
        .prepare(
          "SELECT count(*) AS n FROM sqlite_master WHERE type = 'index' AND name = 'entries_by_conversation'",
        )
        .get(),
    ).toEqual({ n: 0 });
    old.close();

    const storage = await openSqliteStorage(path);
    expect(await storage.conversation(1 as ConversationId)).toEqual({ id: 1 });
    await storage.close();
    const db = new Database(path, { readonly: true });
    expect(db.prepare("SELECT version FROM migrations ORDER BY version").all()).toEqual([
      { version: 1 },
      { version: 2 },
    ]);
    expect(
      db
        .prepare(
          "SELECT count(*) AS n FROM sqlite_master WHERE type = 'index' AND name = 'entries_by_conversation'",
        )
        .get(),
    ).toEqual({ n: 1 });
    db.close();
  });

  it("an upgrade that fails part way leaves the file at its old version, with nothing of the new one", async () => {
    const old = new Database(path);
    new BetterSqlite3Database(old).transactionSync((tx) => migrate(tx, path, 1));
    // An object named like a late index of migration 2 makes that migration fail after its first statements.
    old.exec("CREATE TABLE documents_live_by_scope_kind (x)");
    old.close();
    await expect(openSqliteStorage(path)).rejects.toThrow(
      /already a table named documents_live_by_scope_kind/,
    );
    const db = new Database(path, { readonly: true });
    expect(db.prepare("SELECT max(version) AS v FROM migrations").get()).toEqual({ v: 1 });
    expect(
      db
        .prepare(
          "SELECT count(*) AS n FROM sqlite_master WHERE type = 'index' AND name = 'entries_by_conversation'",
        )
        .get(),
    ).toEqual({ n: 0 });
    db.close();
  });

  it("refuses a file written by a newer schema, naming the file and both versions, and leaves it untouched", async () => {
    const storage = await openSqliteStorage(path);
    await storage.close();
    const db = new Database(path);
    db.prepare("INSERT INTO migrations (version, applied_at) VALUES (3, 'later')").run();
    db.close();
    const error = await openSqliteStorage(path).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StorageVersionError);
    expect((error as Error).message).toContain(path);
    expect((error as Error).message).toMatch(/schema version 3.*up to 2/);
    // The refused open released the file: a plain connection can write to it.
    const again = new Database(path);
    expect(again.prepare("SELECT max(version) AS v FROM migrations").get()).toEqual({ v: 3 });
    again.close();
  });

  it("refuses a file that is not SQLite, or SQLite without Durably's tables, as StorageCorrupted", async () => {
    writeFileSync(
      path,
      "this is not a database, just some text that is long enough to look like a header".repeat(20),
    );
    const notSqlite = await openSqliteStorage(path).catch((e: unknown) => e);
    expect(notSqlite).toBeInstanceOf(StorageCorrupted);
    expect((notSqlite as Error).message).toContain(path);

    const other = join(dir.dir, "other.sqlite");
    const db = new Database(other);
    db.exec("CREATE TABLE users (id INTEGER PRIMARY KEY)");
    db.close();
    const foreign = await openSqliteStorage(other).catch((e: unknown) => e);
    expect(foreign).toBeInstanceOf(StorageCorrupted);
    expect((foreign as Error).message).toMatch(/not a Durably SQLite storage.*users/);
  });

  it("rejects an unknown synchronous mode before touching the file", async () => {
    await expect(openSqliteStorage(path, { synchronous: "off" as never })).rejects.toThrow(
      TypeError,
    );
    const full = await openSqliteStorage(path, { synchronous: "full" });
    await full.close();
  });
});
