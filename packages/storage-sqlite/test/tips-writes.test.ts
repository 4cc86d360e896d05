import { describe, expect, it } from "vitest";
import type { Batch, ConversationId, DocumentId, EntryId, StorageWrite } from "@durably/core";
import { BetterSqlite3Database, openSqliteStorage, SqliteStorage } from "../src/index.js";
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
    // Entry 10 is stored by an earlier call, so only the write itself finds it taken: the
    // second batch is undone by its savepoint after its document change was written.
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
