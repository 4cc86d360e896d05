import { writeFileSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  StorageCorrupted,
  StorageVersionError,
  type ConversationId,
  type DocumentId,
  type EntryId,
  type Seq,
  type TaskId,
} from "@durably/core";
import { BetterSqlite3Database, openSqliteStorage, SCHEMA_VERSION } from "../src/index.js";
import { migrate } from "../src/schema.js";
import { editDatabase, openFailure, tempDir } from "./helpers.js";

const TABLES = [
  "conversations",
  "document_revisions",
  "documents",
  "entries",
  "ids",
  "migrations",
  "submissions",
  "tasks",
  "tips",
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
  it("creates the nine tables, with entries, document_revisions and tips shaped as documented, at version 5", async () => {
    const storage = await openSqliteStorage(path);
    await storage.close();
    const db = new Database(path, { readonly: true });
    const tables = db
      .prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
      .all();
    expect(tables.map((t) => (t as { name: string }).name)).toEqual(TABLES);
    expect(columns(db, "entries")).toEqual([
      "id",
      "conversation_id",
      "commit_seq",
      "record",
      "head",
      "crc",
      "prev",
      "prev_head",
    ]);
    expect(columns(db, "document_revisions").slice(0, 4)).toEqual([
      "document_id",
      "seq",
      "kind",
      "content",
    ]);
    expect(db.prepare("SELECT version FROM migrations ORDER BY version").all()).toEqual([
      { version: 1 },
      { version: 2 },
      { version: 3 },
      { version: 4 },
      { version: 5 },
    ]);
    expect(columns(db, "tips")).toEqual(["id", "chain", "newest", "newest_head", "crc"]);
    expect(columns(db, "documents")).not.toContain("last_seq");
    expect(db.prepare("SELECT id, chain, newest FROM tips").all()).toEqual([
      { id: 0, chain: "seq", newest: 1 },
    ]);
    expect(SCHEMA_VERSION).toBe(5);
    expect(db.pragma("journal_mode", { simple: true })).toBe("wal");
    db.close();
  });

  it("migrates a version-1 file forward to the current version in one transaction, keeping its data", async () => {
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
      { version: 3 },
      { version: 4 },
      { version: 5 },
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

  it("migrates a version-2 file to checksummed rows: every row reads back, heads are found without JSON functions, a later edit is caught", async () => {
    writeVersion2File(path);
    const storage = await openSqliteStorage(path);
    expect(await storage.conversation(1 as ConversationId)).toEqual({ id: 1 });
    expect((await storage.entry(2 as EntryId))?.entry.data).toBe("hello");
    expect((await storage.latestHead(1 as ConversationId))?.id).toBe(3);
    expect((await storage.task(4 as TaskId))?.input).toBe("work");
    expect((await storage.document(5 as DocumentId, "current"))?.value).toEqual({ text: "ab" });
    expect((await storage.document(5 as DocumentId, 1 as Seq))?.value).toEqual({ text: "a" });
    // The counters carried over: the next commit gets seq 3.
    let seq = 0;
    await storage.commit([[]], (_, s) => (seq = s));
    expect(seq).toBe(3);
    await storage.close();
    const db = new Database(path);
    expect(db.prepare("SELECT max(version) AS v FROM migrations").get()).toEqual({ v: 5 });
    expect(db.prepare("SELECT id, head, prev, prev_head FROM entries ORDER BY id").all()).toEqual([
      { id: 2, head: 0, prev: 0, prev_head: 0 },
      { id: 3, head: 1, prev: 2, prev_head: 0 },
    ]);
    // The seq counter after the commit above (seq 3), conversation 1's entries, document 5's revisions.
    expect(db.prepare("SELECT id, chain, newest, newest_head FROM tips ORDER BY id").all()).toEqual(
      [
        { id: 0, chain: "seq", newest: 4, newest_head: 0 },
        { id: 1, chain: "entries", newest: 3, newest_head: 3 },
        { id: 5, chain: "revisions", newest: 2, newest_head: 0 },
      ],
    );
    expect(
      db.prepare("SELECT sql FROM sqlite_master WHERE name = 'entries_heads'").get(),
    ).toMatchObject({ sql: expect.not.stringContaining("json_extract") as unknown });
    db.prepare("UPDATE entries SET record = replace(record, 'hello', 'hellp') WHERE id = 2").run();
    db.close();
    const reopened = await openSqliteStorage(path);
    await expect(reopened.entry(2 as EntryId)).rejects.toMatchObject({
      name: "StorageCorrupted",
      location: { table: "entries", key: "2" },
    });
    await reopened.close();
  });

  it("refuses to seal a version-2 row that is already broken: StorageCorrupted naming table and key, and the file stays at version 2", async () => {
    writeVersion2File(path);
    editDatabase(path, "UPDATE tasks SET record = '{\"id\":4,' WHERE id = 4");
    const error = await openFailure(path);
    expect(error).toBeInstanceOf(StorageCorrupted);
    expect(error).toMatchObject({ location: { file: path, table: "tasks", key: "4" } });
    const db = new Database(path, { readonly: true });
    expect(db.prepare("SELECT max(version) AS v FROM migrations").get()).toEqual({ v: 2 });
    expect(columns(db, "entries")).not.toContain("crc");
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
    editDatabase(
      path,
      `INSERT INTO migrations (version, applied_at) VALUES (${SCHEMA_VERSION + 1}, 'later')`,
    );
    const error = await openFailure(path);
    expect(error).toBeInstanceOf(StorageVersionError);
    expect((error as Error).message).toContain(path);
    expect((error as Error).message).toContain(
      `schema version ${SCHEMA_VERSION + 1}; this @durably/storage-sqlite understands versions up to ${SCHEMA_VERSION}`,
    );
    // The refused open released the file: a plain connection can write to it.
    const again = new Database(path);
    expect(again.prepare("SELECT max(version) AS v FROM migrations").get()).toEqual({
      v: SCHEMA_VERSION + 1,
    });
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

  it("rejects an unknown openCheck naming the accepted values", async () => {
    await expect(openSqliteStorage(path, { openCheck: "fast" as never })).rejects.toThrow(
      /openCheck must be "quick", "full" or "none", got "fast"/,
    );
    const full = await openSqliteStorage(path, { openCheck: "full" });
    await full.close();
  });
});

/** A file as version 2 of this package left it: the tables and indexes, rows without checksums. */
function writeVersion2File(file: string): void {
  const old = new Database(file);
  new BetterSqlite3Database(old).transactionSync((tx) => migrate(tx, file, 2));
  old.exec(`
    INSERT INTO conversations (id, owner_task_id, record) VALUES (1, NULL, '{"id":1}');
    INSERT INTO entries (id, conversation_id, commit_seq, record)
      VALUES (2, 1, 1, '{"id":2,"conversationId":1,"kind":"note","data":"hello"}'),
             (3, 1, 2, '{"id":3,"conversationId":1,"kind":"note","head":3}');
    INSERT INTO tasks (id, conversation_id, kind, status, abort_requested, background, owner, record)
      VALUES (4, 1, 'job', 'pending', 0, 0, NULL,
        '{"id":4,"conversationId":1,"kind":"job","version":1,"input":"work","background":false,"abortRequested":false,"state":{"status":"pending","checkpoint":null}}');
    INSERT INTO documents (id, kind, key, scope, rewindable, created_at, retired_at, version, base_seq, record)
      VALUES (5, 'notes', NULL, 'c:1', 1, 1, NULL, 1, 1,
        '{"id":5,"kind":"notes","scope":{"kind":"conversation","conversationId":1},"history":"rewindable"}');
    INSERT INTO document_revisions (document_id, seq, kind, content, version)
      VALUES (5, 1, 'base', '{"text":"a"}', 1), (5, 2, 'delta', '[["a",["text"],"b"]]', 1);
    UPDATE metadata SET value = 3 WHERE name = 'next_seq';
    UPDATE ids SET high_water = 1029 WHERE namespace = 'global';
  `);
  old.close();
}
