import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  BatchRefused,
  type ConversationId,
  type DocumentId,
  type EntryId,
  type Json,
  type StorageWrite,
  type TaskId,
} from "@durably/core";
import { openSqliteStorage, type SqliteStorage } from "../src/index.js";
import { tempDir } from "./helpers.js";

const C = 1 as ConversationId;

function nested(depth: number): Json {
  let value: Json = "bottom";
  for (let i = 0; i < depth; i++) value = [value];
  return value;
}

let dir: ReturnType<typeof tempDir>;
let storage: SqliteStorage;
const unhandled: unknown[] = [];
const onUnhandled = (reason: unknown) => void unhandled.push(reason);

beforeEach(async () => {
  dir = tempDir("durably-sqlite-deep-");
  storage = await openSqliteStorage(join(dir.dir, "deep.sqlite"));
  await storage.commit([[{ type: "conversation", value: { id: C } }]], () => {});
  unhandled.length = 0;
  process.on("unhandledRejection", onUnhandled);
});
afterEach(async () => {
  process.off("unhandledRejection", onUnhandled);
  await storage.close();
  dir.cleanup();
});

/** Lets any stray promise rejection surface before the test looks. */
const settle = () => new Promise((resolve) => setTimeout(resolve, 20));

describe("deeply nested values never meet SQLite's JSON functions", () => {
  it("an entry, a task and a document nested 1,500 levels (past SQLite's JSON depth of 1,000) are stored and read back whole, or refused as invalid-write; never a raw SQLite error", async () => {
    const deep = nested(1500);
    const writes: StorageWrite[] = [
      {
        type: "entry",
        value: {
          id: 2 as EntryId,
          conversationId: C,
          kind: "deep",
          data: deep,
          head: 2 as EntryId,
        },
      },
      {
        type: "task",
        value: {
          id: 3 as TaskId,
          conversationId: C,
          kind: "deep",
          version: 1,
          input: deep,
          background: false,
          abortRequested: false,
          state: { status: "pending", checkpoint: deep },
        },
      },
      {
        type: "document.create",
        record: { id: 4 as DocumentId, kind: "deep", scope: { kind: "session" } },
        content: { kind: "base", version: 1, value: { tree: deep } },
      },
    ];
    const result = await storage.commit([writes], () => {});
    await settle();
    expect(unhandled).toEqual([]);
    if (result.refused !== undefined) {
      // A depth limit at the boundary (at most 256 levels) may refuse it: cleanly, naming the write.
      expect(result.refused).toBeInstanceOf(BatchRefused);
      expect(result.refused).toMatchObject({ reason: "invalid-write" });
      expect(result.refused.message).toMatch(/batches\[0\]\[0\]/);
      return;
    }
    expect(result.stored).toBe(1);
    expect((await storage.entry(2 as EntryId))?.entry.data).toEqual(deep);
    expect((await storage.latestHead(C))?.id).toBe(2);
    expect((await storage.task(3 as TaskId))?.input).toEqual(deep);
    expect((await storage.document(4 as DocumentId, "current"))?.value).toEqual({ tree: deep });
  });

  it("a value too deep for the JavaScript engine to copy refuses its batch as invalid-write naming the write, leaves no unhandled rejection, and the storage keeps working", async () => {
    const entry: StorageWrite = {
      type: "entry",
      value: { id: 5 as EntryId, conversationId: C, kind: "deep", data: nested(200_000) },
    };
    const result = await storage.commit([[entry]], () => {});
    await settle();
    expect(unhandled).toEqual([]);
    expect(result.stored).toBe(0);
    expect(result.refused).toBeInstanceOf(BatchRefused);
    expect(result.refused).toMatchObject({ reason: "invalid-write", batchIndex: 0, writeIndex: 0 });
    expect(result.refused?.message).toMatch(/batches\[0\]\[0\]/);
    expect(await storage.entry(5 as EntryId)).toBeUndefined();
    const after = await storage.commit(
      [[{ type: "entry", value: { id: 6 as EntryId, conversationId: C, kind: "note" } }]],
      () => {},
    );
    expect(after).toEqual({ stored: 1 });
  });
});
