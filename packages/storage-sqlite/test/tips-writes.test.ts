import { describe, expect, it } from "vitest";
import type { Batch, ConversationId, DocumentId, EntryId, StorageWrite } from "@durably/core";
import {
  BetterSqlite3Database,
  openSqliteStorage,
  SqliteStorage,
  type SqliteStatements,
  type TransactionOptions,
} from "../src/index.js";
import { databasePerTest, seqRecorder } from "./helpers.js";
import { RecordingDatabase } from "./recording-database.js";

// A commit call writes the ends of the chains it moved (entries per
// conversation, revisions per document) and the seq counter once, at its
// end, in a few multi-row statements. These cases check that what lands in
// `tips` is exactly what the kept batches left, never a refused batch's.

const conversation = (id: number): StorageWrite => ({
  type: "conversation",
  value: { id: id as ConversationId },
});
const entry = (id: number, conversationId: number, data: string): StorageWrite => ({
  type: "entry",
  value: {
    id: id as EntryId,
    conversationId: conversationId as ConversationId,
    kind: "note",
    data,
  },
});
const createDoc = (id: number, conversationId: number, text: string): StorageWrite => ({
  type: "document.create",
  record: {
    id: id as DocumentId,
    kind: `app.notes-${id}`,
    scope: { kind: "conversation", conversationId: conversationId as ConversationId },
  },
  content: { kind: "base", version: 1, value: { text } },
});
const delta = (id: number, text: string): StorageWrite => ({
  type: "document.change",
  id: id as DocumentId,
  content: { kind: "delta", version: 1, ops: [["a", ["text"], text]] },
});

const TIPS_SQL = "SELECT id, chain, newest, newest_head FROM tips ORDER BY chain, id";

// Each test starts from a new, empty database file.
const db = databasePerTest("tips.sqlite", async () => {});

async function commit(storage: SqliteStorage, ...batches: Batch[]) {
  const rec = seqRecorder();
  const result = await storage.commit(batches, rec.receive);
  return { ...result, seqs: rec.seqs };
}

describe("tips written once per commit call", () => {
  it("a refused batch's document change moves no chain end: the document reads and grows on from the kept batch", async () => {
    let storage = await openSqliteStorage(db.path);
    await commit(storage, [conversation(1), createDoc(3, 1, "a"), entry(10, 1, "stored")]);
    // Entry 10 is stored by an earlier call, so only the write itself finds it taken, after the
    // second batch's document change was written: the call is rolled back and its first batch
    // written again.
    const r = await commit(
      storage,
      [entry(11, 1, "kept"), delta(3, "b")],
      [delta(3, "gone"), entry(10, 1, "again")],
    );
    expect(r.stored).toBe(1);
    expect(r.refused).toMatchObject({ reason: "immutable-record", batchIndex: 1, writeIndex: 1 });
    expect(await storage.inspect(TIPS_SQL)).toEqual([
      { id: 1, chain: "entries", newest: 11, newest_head: 0 },
      { id: 3, chain: "revisions", newest: 2, newest_head: 0 },
      { id: 0, chain: "seq", newest: 3, newest_head: 0 },
    ]);
    expect(await storage.document(3 as DocumentId, "current")).toMatchObject({
      value: { text: "ab" },
    });
    expect((await commit(storage, [delta(3, "c")])).seqs).toEqual([3]);
    await storage.close();
    // Reading after a reopen walks the revision chain from the stored tip.
    storage = await openSqliteStorage(db.path);
    expect(await storage.document(3 as DocumentId, "current")).toMatchObject({
      value: { text: "abc" },
      deltasSinceBase: 2,
    });
    await storage.close();
  });

  it("a call of 40 batches over 40 conversations and documents writes its 81 tips in three statements, each tip exact", async () => {
    const recording = new RecordingDatabase(BetterSqlite3Database.open(db.path));
    let storage = await SqliteStorage.open(recording, { location: db.path });
    const n = 40;
    const setup: StorageWrite[] = [];
    for (let i = 0; i < n; i++) setup.push(conversation(100 + i), createDoc(200 + i, 100 + i, "a"));
    await commit(storage, setup);
    const before = recording.statements.length;
    const batches: Batch[] = [];
    for (let i = 0; i < n; i++) batches.push([entry(1000 + i, 100 + i, "x"), delta(200 + i, "b")]);
    const r = await commit(storage, ...batches);
    expect(r.stored).toBe(n);
    const tipWrites = recording.statements
      .slice(before)
      .filter(({ sql }) => /^\s*INSERT INTO tips/.test(sql));
    // 40 entry ends + 40 revision ends + the seq counter, 32 rows per statement.
    expect(tipWrites.map(({ params }) => params.length / 5)).toEqual([32, 32, 17]);
    const tips = await storage.inspect<{ id: number; chain: string; newest: number }>(TIPS_SQL);
    for (let i = 0; i < n; i++) {
      expect(tips).toContainEqual({
        id: 100 + i,
        chain: "entries",
        newest: 1000 + i,
        newest_head: 0,
      });
      // Batch i of the call got seq 2 + i.
      expect(tips).toContainEqual({
        id: 200 + i,
        chain: "revisions",
        newest: 2 + i,
        newest_head: 0,
      });
    }
    expect(tips).toContainEqual({ id: 0, chain: "seq", newest: 2 + n, newest_head: 0 });
    await storage.close();
    storage = await openSqliteStorage(db.path);
    for (let i = 0; i < n; i++)
      expect(await storage.document((200 + i) as DocumentId, "current")).toMatchObject({
        value: { text: "ab" },
      });
    await storage.close();
  });
});

/** Records statements like `RecordingDatabase`, and makes the next transaction's statement matching `failOn` throw. */
class FailingDatabase extends RecordingDatabase {
  failOn: RegExp | undefined;
  override transaction<T>(
    work: (db: SqliteStatements) => T,
    options?: TransactionOptions,
  ): Promise<T> {
    return super.transaction((db) => {
      const failing: SqliteStatements = {
        run: (sql, params) => {
          if (this.failOn?.test(sql)) {
            this.failOn = undefined;
            throw Object.assign(new Error("disk full (injected)"), { code: "SQLITE_FULL" });
          }
          return db.run(sql, params);
        },
        get: (sql, params) => db.get(sql, params),
        all: (sql, params) => db.all(sql, params),
      };
      return work(failing);
    }, options);
  }
}

describe("conversation tips known as committed", () => {
  const tipReads = (recording: RecordingDatabase, from: number) =>
    recording.statements.slice(from).filter(({ sql }) => /FROM tips WHERE/.test(sql)).length;
  const links = (storage: SqliteStorage) =>
    storage.inspect<{ id: number; prev: number }>("SELECT id, prev FROM entries ORDER BY id");

  it("a conversation's tip is read from the file once; later calls link from the tip they committed", async () => {
    const recording = new RecordingDatabase(BetterSqlite3Database.open(db.path));
    let storage = await SqliteStorage.open(recording, { location: db.path });
    await commit(storage, [conversation(1)]);
    let from = recording.statements.length;
    await commit(storage, [entry(10, 1, "a")]);
    expect(tipReads(recording, from)).toBe(1);
    from = recording.statements.length;
    await commit(storage, [entry(11, 1, "b")], [entry(12, 1, "c")]);
    await commit(storage, [entry(13, 1, "d")]);
    expect(tipReads(recording, from)).toBe(0);
    expect(await links(storage)).toEqual([
      { id: 10, prev: 0 },
      { id: 11, prev: 10 },
      { id: 12, prev: 11 },
      { id: 13, prev: 12 },
    ]);
    await storage.close();
    // A reopened storage reads the tip again, once, and the chain verifies end to end.
    const reopened = new RecordingDatabase(BetterSqlite3Database.open(db.path));
    storage = await SqliteStorage.open(reopened, { location: db.path });
    from = reopened.statements.length;
    await commit(storage, [entry(14, 1, "e")]);
    await commit(storage, [entry(15, 1, "f")]);
    expect(tipReads(reopened, from)).toBe(1);
    const scan = await storage.scanEntries({ conversationId: 1 as ConversationId }, 100);
    expect(scan.items.map((e) => e.id)).toEqual([15, 14, 13, 12, 11, 10]);
    await storage.close();
  });

  it("a call that fails forgets the known tips: the next call reads them from the file and links to what was committed", async () => {
    const failing = new FailingDatabase(BetterSqlite3Database.open(db.path));
    const storage = await SqliteStorage.open(failing, { location: db.path });
    await commit(storage, [conversation(1), entry(10, 1, "a")]);
    failing.failOn = /^\s*INSERT INTO tips/;
    await expect(commit(storage, [entry(11, 1, "lost")])).rejects.toMatchObject({
      name: "StorageIOError",
    });
    const from = failing.statements.length;
    await commit(storage, [entry(12, 1, "b")]);
    expect(tipReads(failing, from)).toBe(1);
    expect(await links(storage)).toEqual([
      { id: 10, prev: 0 },
      { id: 12, prev: 10 },
    ]);
    const scan = await storage.scanEntries({ conversationId: 1 as ConversationId }, 100);
    expect(scan.items.map((e) => e.id)).toEqual([12, 10]);
    await storage.close();
  });

  it("a later batch's conflict rolls the call back and writes the batches before it again, with no savepoint", async () => {
    const recording = new RecordingDatabase(BetterSqlite3Database.open(db.path));
    const storage = await SqliteStorage.open(recording, { location: db.path });
    await commit(storage, [conversation(1), entry(10, 1, "a")]);
    const from = recording.statements.length;
    const r = await commit(
      storage,
      [entry(11, 1, "kept")],
      [entry(12, 1, "kept too")],
      [entry(13, 1, "gone"), entry(10, 1, "taken")],
      [entry(14, 1, "after")],
    );
    expect(r.stored).toBe(2);
    expect(r.refused).toMatchObject({ reason: "immutable-record", batchIndex: 2, writeIndex: 1 });
    expect(r.seqs).toEqual([2, 3]);
    const run = recording.statements.slice(from).map(({ sql }) => sql);
    expect(run.filter((sql) => /SAVEPOINT|RELEASE|ROLLBACK TO/.test(sql))).toEqual([]);
    expect(await links(storage)).toEqual([
      { id: 10, prev: 0 },
      { id: 11, prev: 10 },
      { id: 12, prev: 11 },
    ]);
    // The next call links from the tip the second attempt committed, not the first attempt's.
    expect((await commit(storage, [entry(15, 1, "next")])).seqs).toEqual([4]);
    expect((await links(storage)).at(-1)).toEqual({ id: 15, prev: 12 });
    expect(await storage.inspect(TIPS_SQL)).toContainEqual({
      id: 1,
      chain: "entries",
      newest: 15,
      newest_head: 0,
    });
    await storage.close();
  });
});
