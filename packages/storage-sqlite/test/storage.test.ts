import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  BatchRefused,
  StorageClosed,
  StorageCorrupted,
  StorageRequestError,
  type Batch,
  type ConversationId,
  type DocumentId,
  type EntryId,
  type Seq,
  type StorageWrite,
} from "@durably/core";
import {
  ENTRY_ROWS_SQL,
  openSqliteStorage,
  REVISION_ROWS_SQL,
  type SqliteStorage,
} from "../src/index.js";
import { ID_RESERVATION } from "../src/apply-plans.js";
import { seqRecorder, tempDir } from "./helpers.js";

const C = 1 as ConversationId;
const conversation: StorageWrite = { type: "conversation", value: { id: C } };
const entry = (id: number, data: string): StorageWrite => ({
  type: "entry",
  value: { id: id as EntryId, conversationId: C, kind: "note", data },
});
const createDoc = (id: number, text: string, history?: "rewindable"): StorageWrite => ({
  type: "document.create",
  record: {
    id: id as DocumentId,
    kind: `app.notes-${id}`,
    scope: { kind: "conversation", conversationId: C },
    ...(history ? { history } : {}),
  },
  content: { kind: "base", version: 1, value: { text } },
});
const delta = (id: number, text: string): StorageWrite => ({
  type: "document.change",
  id: id as DocumentId,
  content: { kind: "delta", version: 1, ops: [["a", ["text"], text]] },
});
const base = (id: number, text: string): StorageWrite => ({
  type: "document.change",
  id: id as DocumentId,
  content: { kind: "base", version: 1, value: { text } },
});

let dir: ReturnType<typeof tempDir>;
let path: string;
let storage: SqliteStorage;

beforeEach(async () => {
  dir = tempDir();
  path = join(dir.dir, "session.sqlite");
  storage = await openSqliteStorage(path);
});
afterEach(async () => {
  await storage.close();
  dir.cleanup();
});

async function commit(...batches: Batch[]) {
  const rec = seqRecorder();
  const result = await storage.commit(batches, rec.receive);
  return { ...result, seqs: rec.seqs };
}

describe("SQLite storage", () => {
  it("stores batches with their own seqs in one call, and the rows read naturally", async () => {
    const r = await commit(
      [conversation, entry(2, "hello"), createDoc(3, "a")],
      [entry(4, "goodbye"), delta(3, "b")],
    );
    expect(r).toEqual({ stored: 2, seqs: [1, 2] });
    expect(await storage.entry(4 as EntryId)).toEqual({
      entry: { id: 4, conversationId: C, kind: "note", data: "goodbye" },
      commitSeq: 2,
    });
    expect(await storage.inspect(ENTRY_ROWS_SQL)).toEqual([
      { id: 2, conversation_id: 1, commit_seq: 1, data: "hello" },
      { id: 4, conversation_id: 1, commit_seq: 2, data: "goodbye" },
    ]);
    expect(await storage.inspect(REVISION_ROWS_SQL)).toEqual([
      { document_id: 3, seq: 1, kind: "base", content: '{"text":"a"}' },
      { document_id: 3, seq: 2, kind: "delta", content: '[["a",["text"],"b"]]' },
    ]);
    const doc = await storage.document(3 as DocumentId, "current");
    expect(doc).toMatchObject({ version: 1, value: { text: "ab" }, deltasSinceBase: 1 });
  });

  it("a refusal keeps the earlier batches and leaves no trace of the refused one", async () => {
    await commit([conversation]);
    const r = await commit(
      [entry(2, "kept")],
      [entry(3, "gone"), entry(2, "again")],
      [entry(5, "never")],
    );
    expect(r.stored).toBe(1);
    expect(r.refused).toBeInstanceOf(BatchRefused);
    expect(r.refused).toMatchObject({ reason: "immutable-record", batchIndex: 1, writeIndex: 1 });
    expect(await storage.entry(3 as EntryId)).toBeUndefined();
    expect(await storage.entry(5 as EntryId)).toBeUndefined();
    // A refused first batch rolls the whole transaction back.
    const first = await commit([entry(6, "x"), delta(99, "y")]);
    expect(first.stored).toBe(0);
    expect(first.refused).toMatchObject({
      reason: "unknown-document",
      batchIndex: 0,
      writeIndex: 1,
    });
    expect(await storage.entry(6 as EntryId)).toBeUndefined();
    expect((await commit([])).seqs).toEqual([3]);
  });

  it("refuses a delta that does not apply, a version crossing and a non-JSON value", async () => {
    await commit([conversation, createDoc(3, "a")]);
    const bad: StorageWrite = {
      type: "document.change",
      id: 3 as DocumentId,
      content: { kind: "delta", version: 1, ops: [["a", ["missing"], "x"]] },
    };
    expect((await commit([bad])).refused).toMatchObject({ reason: "invalid-write" });
    const crossing: StorageWrite = {
      type: "document.change",
      id: 3 as DocumentId,
      content: { kind: "delta", version: 2, ops: [] },
    };
    expect((await commit([crossing])).refused).toMatchObject({ reason: "version-crossing" });
    const nan = {
      type: "entry",
      value: { id: 9, conversationId: C, kind: "n", data: [Number.NaN] },
    } as unknown as StorageWrite;
    const refused = (await commit([nan])).refused as BatchRefused;
    expect(refused.reason).toBe("invalid-write");
    expect(refused.message).toContain("batches[0][0].value.data[0]");
  });

  it("reclaims current-only revisions after a base and after retirement, keeps rewindable history", async () => {
    await commit([conversation, createDoc(3, "a"), createDoc(4, "r", "rewindable")]);
    await commit([delta(3, "b"), delta(4, "s")]);
    await commit([base(3, "fresh"), base(4, "new")]);
    await commit([delta(3, "!"), delta(4, "?")]);
    const revisions = await storage.inspect<{ document_id: number; seq: number }>(
      "SELECT document_id, seq FROM document_revisions ORDER BY document_id, seq",
    );
    expect(revisions).toEqual([
      { document_id: 3, seq: 3 },
      { document_id: 3, seq: 4 },
      { document_id: 4, seq: 1 },
      { document_id: 4, seq: 2 },
      { document_id: 4, seq: 3 },
      { document_id: 4, seq: 4 },
    ]);
    expect((await storage.document(4 as DocumentId, 2 as Seq))?.value).toEqual({ text: "rs" });
    await expect(storage.document(3 as DocumentId, 2 as Seq)).rejects.toMatchObject({
      reason: "history-unavailable",
    });
    expect((await storage.document(3 as DocumentId, 4 as Seq))?.value).toEqual({ text: "fresh!" });
    await commit([
      { type: "document.retire", id: 3 as DocumentId },
      { type: "document.retire", id: 4 as DocumentId },
    ]);
    const left = await storage.inspect<{ n: number }>(
      "SELECT count(*) AS n FROM document_revisions WHERE document_id = 3",
    );
    expect(left).toEqual([{ n: 0 }]);
    expect(await storage.document(3 as DocumentId, "current")).toBeUndefined();
    await expect(storage.document(3 as DocumentId, 4 as Seq)).rejects.toBeInstanceOf(
      StorageRequestError,
    );
    expect((await storage.document(4 as DocumentId, 1 as Seq))?.value).toEqual({ text: "r" });
  });

  it("reports rows changed by hand and a missing base as StorageCorrupted naming table and id/seq", async () => {
    const task: StorageWrite = {
      type: "task",
      value: {
        id: 5,
        conversationId: C,
        kind: "t",
        version: 1,
        input: null,
        background: false,
        abortRequested: false,
        state: { status: "pending", checkpoint: null },
      },
    } as StorageWrite;
    await commit([conversation, entry(2, "x"), createDoc(3, "a"), task]);
    await commit([delta(3, "b")]);
    await storage.close();
    const raw = new Database(path);
    raw.prepare("UPDATE entries SET record = '[1]' WHERE id = 2").run();
    raw.prepare("UPDATE tasks SET record = '{broken' WHERE id = 5").run();
    raw.prepare("DELETE FROM document_revisions WHERE document_id = 3 AND seq = 1").run();
    raw.close();
    storage = await openSqliteStorage(path);
    const entryError = await storage.entry(2 as EntryId).catch((e: unknown) => e);
    expect(entryError).toBeInstanceOf(StorageCorrupted);
    expect((entryError as Error).message).toMatch(/entries id 2/);
    expect(entryError).toMatchObject({ location: { table: "entries", key: "2" } });
    await expect(storage.task(5 as never)).rejects.toThrow(/tasks id 5: the row does not match/);
    const docError = await storage.document(3 as DocumentId, "current").catch((e: unknown) => e);
    expect(docError).toBeInstanceOf(StorageCorrupted);
    // The document row names its base at seq 1: the read reports that revision as missing.
    expect(docError).toMatchObject({
      location: { table: "document_revisions", documentId: 3, seq: 1 },
    });
    expect((docError as Error).message).toMatch(
      /document_revisions document_id\/seq 3\/1: revision seq 1 of document 3 is missing/,
    );
  });

  it("keeps seqs and the id high-water mark across reopen", async () => {
    const minted = [await storage.mintId(), await storage.mintId()];
    expect(minted).toEqual([2, 3]);
    await commit([
      conversation,
      { type: "entry", value: { id: 40 as EntryId, conversationId: C, kind: "k" } },
    ]);
    await storage.close();
    await expect(storage.mintId()).rejects.toBeInstanceOf(StorageClosed);
    storage = await openSqliteStorage(path);
    // The stored high-water mark reserves ids ahead (ID_RESERVATION), so a reopen skips, never repeats.
    const after = await storage.mintId();
    expect(after).toBeGreaterThan(40);
    expect(after).toBeLessThanOrEqual(40 + ID_RESERVATION + 1);
    expect((await commit([])).seqs).toEqual([2]);
  });

  it.each([
    ["tips", "id = 0 AND chain = 'seq'", "seq counter"],
    ["ids", "namespace = 'global'", "high_water"],
  ])(
    "refuses to open a file whose %s counter row is missing, as StorageCorrupted naming the table, and leaves the file as it was",
    async (table, row, named) => {
      await commit([conversation, entry(2, "kept")]);
      await storage.close();
      const raw = new Database(path);
      raw.prepare(`DELETE FROM ${table} WHERE ${row}`).run();
      raw.close();
      const error = await openSqliteStorage(path).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(StorageCorrupted);
      expect(error).toMatchObject({ location: { file: path, table } });
      expect((error as Error).message).toContain(named);
      // The refused open changed nothing and let go of the file.
      const again = new Database(path);
      expect(again.prepare(`SELECT count(*) AS n FROM ${table} WHERE ${row}`).get()).toEqual({
        n: 0,
      });
      expect(again.prepare("SELECT count(*) AS n FROM entries").get()).toEqual({ n: 1 });
      again.close();
    },
  );
});
