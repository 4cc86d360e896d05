import { readFileSync, writeFileSync } from "node:fs";
import { crc32 } from "node:zlib";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import {
  StorageCorrupted,
  type ConversationId,
  type DocumentId,
  type EntryId,
  type Seq,
  type StorageWrite,
  type SubmissionId,
  type TaskId,
} from "@durably/core";
import { openSqliteStorage, type SqliteStorage } from "../src/index.js";
import { databasePerTest, editDatabase, openFailure, seqRecorder } from "./helpers.js";

const C = 1 as ConversationId;
const conversation: StorageWrite = { type: "conversation", value: { id: C } };
const fork: StorageWrite = {
  type: "conversation",
  value: { id: 7 as ConversationId, parent: { conversationId: C, at: 77777 as EntryId } },
};
const entry: StorageWrite = {
  type: "entry",
  value: { id: 2 as EntryId, conversationId: C, kind: "note", data: "entry-marker-AAAA" },
};
const task: StorageWrite = {
  type: "task",
  value: {
    id: 3 as TaskId,
    conversationId: C,
    kind: "job",
    version: 1,
    input: "task-marker-AAAA",
    background: false,
    abortRequested: false,
    state: { status: "pending", checkpoint: null },
  },
};
const submission: StorageWrite = {
  type: "submission",
  value: {
    id: 4 as SubmissionId,
    conversationId: C,
    type: "input",
    status: "queued",
    content: "submission-marker-AAAA",
  },
};
const document: StorageWrite = {
  type: "document.create",
  record: {
    id: 5 as DocumentId,
    kind: "notes",
    key: "key-marker-AAAA",
    scope: { kind: "conversation", conversationId: C },
    history: "rewindable",
  },
  content: { kind: "base", version: 1, value: { text: "base-marker-AAAA" } },
};
const delta: StorageWrite = {
  type: "document.change",
  id: 5 as DocumentId,
  content: { kind: "delta", version: 1, ops: [["a", ["text"], "delta-marker-AAAA"]] },
};

const other: StorageWrite = { type: "conversation", value: { id: 8 as ConversationId } };
const database = databasePerTest("checked.sqlite", (writer) =>
  writer.commit(
    [[conversation, fork, other, entry, task, submission, document], [delta]],
    () => {},
  ),
);
let storage: SqliteStorage | undefined;
afterEach(async () => {
  await storage?.close();
  storage = undefined;
});

/**
 * Flips the last byte of `marker` where it sits in the closed database file
 * (it must occur exactly once), the way a bad sector or a stray write would:
 * the JSON stays valid, only its meaning changes.
 */
function flipInFile(marker: string): void {
  const bytes = readFileSync(database.path);
  const at = bytes.indexOf(marker);
  expect(at, `${marker} is in the file`).toBeGreaterThanOrEqual(0);
  expect(bytes.indexOf(marker, at + 1), `${marker} occurs once`).toBe(-1);
  const last = at + marker.length - 1;
  bytes[last] = (bytes[last] as number) ^ 0x03;
  writeFileSync(database.path, bytes);
}

async function corruption(read: (s: SqliteStorage) => Promise<unknown>): Promise<StorageCorrupted> {
  storage = await openSqliteStorage(database.path);
  const outcome = await read(storage).then(
    (value) => ({ value }),
    (error: unknown) => ({ error }),
  );
  if (!("error" in outcome))
    throw new Error(`the read returned data instead of failing: ${JSON.stringify(outcome.value)}`);
  expect(outcome.error).toBeInstanceOf(StorageCorrupted);
  return outcome.error as StorageCorrupted;
}

describe("row checksums: a flipped byte is an error, not different data", () => {
  it.each([
    {
      table: "conversations",
      key: "7",
      marker: '"at":77777',
      read: (s: SqliteStorage) => s.conversation(7 as ConversationId),
    },
    {
      table: "entries",
      key: "2",
      marker: "entry-marker-AAAA",
      read: (s: SqliteStorage) => s.entry(2 as EntryId),
    },
    {
      table: "entries",
      key: "2",
      marker: "entry-marker-AAAA",
      read: (s: SqliteStorage) => s.scanEntries({ conversationId: C }, 10),
    },
    {
      table: "tasks",
      key: "3",
      marker: "task-marker-AAAA",
      read: (s: SqliteStorage) => s.scanTasks({ status: "pending" }, 10),
    },
    {
      table: "submissions",
      key: "4",
      marker: "submission-marker-AAAA",
      read: (s: SqliteStorage) => s.submission(4 as SubmissionId),
    },
    {
      table: "documents",
      key: "5",
      marker: '"key":"key-marker-AAAA',
      read: (s: SqliteStorage) =>
        s.findDocument(
          {
            kind: "notes",
            key: "key-marker-AAAA",
            scope: { kind: "conversation", conversationId: C },
          },
          "current",
        ),
    },
    {
      table: "document_revisions",
      key: "5/1",
      marker: "base-marker-AAAA",
      read: (s: SqliteStorage) => s.document(5 as DocumentId, 1 as Seq),
    },
    {
      table: "document_revisions",
      key: "5/2",
      marker: "delta-marker-AAAA",
      read: (s: SqliteStorage) => s.document(5 as DocumentId, "current"),
    },
  ])(
    "a byte flipped inside a $table row's JSON on disk fails the read with StorageCorrupted naming $table key $key",
    async ({ table, key, marker, read }) => {
      flipInFile(marker);
      const error = await corruption(read);
      expect(error.location).toMatchObject({ file: database.path, table, key });
      expect(error.message).toContain(database.path);
      expect(error.message).toContain(table);
      expect(error.message).toMatch(/does not match its stored checksum/);
    },
  );

  it.each([
    [
      "entries",
      "UPDATE entries SET commit_seq = 5 WHERE id = 2",
      (s: SqliteStorage) => s.entry(2 as EntryId),
    ],
    [
      "tasks",
      "UPDATE tasks SET status = 'terminal' WHERE id = 3",
      (s: SqliteStorage) => s.scanTasks({ status: "terminal" }, 10),
    ],
    [
      "entries",
      "UPDATE entries SET conversation_id = 8 WHERE id = 2",
      (s: SqliteStorage) => s.scanEntries({ conversationId: 8 as ConversationId }, 10),
    ],
    [
      "submissions",
      "UPDATE submissions SET status = 'done' WHERE id = 4",
      (s: SqliteStorage) => s.scanSubmissions({ conversationId: C, status: "done" }, 10),
    ],
    [
      "documents",
      "UPDATE documents SET retired_at = 2 WHERE id = 5",
      (s: SqliteStorage) => s.document(5 as DocumentId, 1 as Seq),
    ],
    [
      "document_revisions",
      "UPDATE document_revisions SET version = 2 WHERE document_id = 5 AND seq = 2",
      (s: SqliteStorage) => s.document(5 as DocumentId, "current"),
    ],
  ] as const)(
    "a changed seq or version column of %s, or an indexed column that no longer matches its record, is caught too",
    async (table, edit, read) => {
      editDatabase(database.path, edit);
      const error = await corruption(read);
      expect(error.location).toMatchObject({ file: database.path, table });
    },
  );

  it("a changed seq counter fails open with StorageCorrupted naming its row of tips", async () => {
    // Seqs going backwards would hand out seqs already used.
    editDatabase(database.path, "UPDATE tips SET newest = 1 WHERE id = 0 AND chain = 'seq'");
    const error = await openFailure(database.path);
    expect(error).toBeInstanceOf(StorageCorrupted);
    expect(error).toMatchObject({
      location: { file: database.path, table: "tips", key: "0/seq" },
    });
  });

  it("the checksum is CRC-32 of the content, a newline, then the other columns as comma-separated JSON values", () => {
    const raw = new Database(database.path, { readonly: true });
    const e = raw.prepare("SELECT * FROM entries WHERE id = 2").get() as Record<string, unknown>;
    const entryColumns = [e.id, e.commit_seq, e.prev, e.prev_head];
    expect(e.crc).toBe(
      crc32(`${e.record as string}\n${JSON.stringify(entryColumns).slice(1, -1)}`),
    );
    const t = raw.prepare("SELECT * FROM tasks WHERE id = 3").get() as Record<string, unknown>;
    expect(t.crc).toBe(crc32(`${t.record as string}\n3`));
    const d = raw.prepare("SELECT * FROM documents WHERE id = 5").get() as Record<string, unknown>;
    const fixed = [d.id, d.rewindable, d.created_at];
    expect(d.crc).toBe(crc32(`${d.record as string}\n${JSON.stringify(fixed).slice(1, -1)}`));
    const state = [d.id, d.version, d.base_seq, d.retired_at];
    expect(d.state_crc).toBe(crc32(`\n${JSON.stringify(state).slice(1, -1)}`));
    const r = raw
      .prepare("SELECT * FROM document_revisions WHERE document_id = 5 ORDER BY seq DESC LIMIT 1")
      .get() as Record<string, unknown>;
    const revision = [r.document_id, r.seq, r.kind, r.version, r.prev_seq];
    expect(r.crc).toBe(crc32(`${r.content as string}\n${JSON.stringify(revision).slice(1, -1)}`));
    const tips = raw.prepare("SELECT * FROM tips ORDER BY id, chain").all() as Record<
      string,
      unknown
    >[];
    // The seq counter, conversation 1's entries, document 5's revisions at least.
    expect(tips.map((t) => `${t.id as number}/${t.chain as string}`)).toEqual(
      expect.arrayContaining(["0/seq", "1/entries", "5/revisions"]),
    );
    for (const tip of tips) {
      const tipColumns = [tip.id, tip.chain, tip.newest, tip.newest_head];
      expect(tip.crc).toBe(crc32(`\n${JSON.stringify(tipColumns).slice(1, -1)}`));
    }
    raw.close();
  });

  it("rows written, changed, retired and reopened read back whole with their checksums intact", async () => {
    storage = await openSqliteStorage(database.path);
    const rec = seqRecorder();
    await storage.commit(
      [
        [
          {
            type: "document.change",
            id: 5 as DocumentId,
            content: { kind: "base", version: 2, value: { n: 1 } },
          },
        ],
        [
          {
            ...task,
            value: { ...(task as { value: object }).value, abortRequested: true },
          } as StorageWrite,
        ],
        [{ type: "document.retire", id: 5 as DocumentId }],
      ],
      rec.receive,
    );
    expect(rec.seqs).toEqual([3, 4, 5]);
    await storage.close();
    storage = await openSqliteStorage(database.path);
    expect((await storage.task(3 as TaskId))?.abortRequested).toBe(true);
    expect((await storage.document(5 as DocumentId, 3 as Seq))?.value).toEqual({ n: 1 });
    expect(await storage.document(5 as DocumentId, "current")).toBeUndefined();
    expect((await storage.entry(2 as EntryId))?.entry.data).toBe("entry-marker-AAAA");
    expect((await storage.conversation(7 as ConversationId))?.parent?.at).toBe(77777);
  });
});
