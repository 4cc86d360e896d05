import { describe, expect, it } from "vitest";
import {
  StorageCorrupted,
  type ConversationId,
  type DocumentId,
  type StorageWrite,
} from "@durably/core";
import { StoreStorage, type KeyValueStore } from "../src/index.js";
import { backends, withFreshStore } from "./backends.js";

const seed: StorageWrite[] = [
  { type: "conversation", value: { id: 1 as ConversationId } },
  { type: "entry", value: { id: 2, conversationId: 1, kind: "note", head: 2 } } as StorageWrite,
  {
    type: "document.create",
    record: { id: 3, kind: "app.notes", scope: { kind: "session" } },
    content: { kind: "base", version: 1, value: { text: "" } },
  } as unknown as StorageWrite,
  {
    type: "task",
    value: {
      id: 4,
      conversationId: 1,
      kind: "job",
      version: 1,
      input: null,
      background: false,
      abortRequested: false,
      state: { status: "pending", checkpoint: null },
    },
  } as StorageWrite,
  {
    type: "submission",
    value: { id: 5, conversationId: 1, type: "input", status: "queued", requestId: "r" },
  } as StorageWrite,
];
const delta: StorageWrite = {
  type: "document.change",
  id: 3 as DocumentId,
  content: { kind: "delta", version: 1, ops: [["s", ["text"], "x"]] },
};

/** Each case: the key to damage, and the read that must report it. */
const cases: [string, (s: StoreStorage) => Promise<unknown>][] = [
  ["c/0000000000000001", (s) => s.conversation(1 as never)],
  ["e/0000000000000001/0000000000000002", (s) => s.scanEntries({ conversationId: 1 as never }, 10)],
  ["e/0000000000000001/0000000000000002", (s) => s.entry(2 as never)],
  ["e/0000000000000001/0000000000000002", (s) => s.latestHead(1 as never)],
  ["t/0000000000000004", (s) => s.task(4 as never)],
  ["ts/pending/0000000000000004", (s) => s.scanTasks({ status: "pending" }, 10)],
  ["s/0000000000000005", (s) => s.submissionByRequest(1 as never, "r")],
  ["d/0000000000000003", (s) => s.document(3 as never, "current")],
  ["r/0000000000000003/0000000000000002", (s) => s.document(3 as never, "current")],
  [
    "da/app.notes/s/-/0000000000000003",
    (s) => s.findDocument({ kind: "app.notes", scope: { kind: "session" } }, "current"),
  ],
  [
    "ds/s/0000000000000003",
    (s) => s.scanDocuments({ scope: { kind: "session" }, at: "current" }, 10),
  ],
];

for (const backend of backends.filter((b) => b.persistent)) {
  describe(`StoreStorage on ${backend.name} > corruption`, () => {
    async function damaged(
      edit: (store: KeyValueStore) => Promise<void>,
      check: (storage: StoreStorage) => Promise<void>,
    ) {
      await withFreshStore(backend, async ({ store, reopen }) => {
        const storage = await StoreStorage.open(store);
        await storage.commit([seed, [delta]], () => undefined);
        await storage.close();
        const raw = (reopen as () => KeyValueStore)();
        await raw.open?.();
        await edit(raw);
        await raw.close();
        const reopened = await StoreStorage.open((reopen as () => KeyValueStore)()).catch(
          (e: unknown) => e,
        );
        if (reopened instanceof StoreStorage) {
          try {
            await check(reopened);
          } finally {
            await reopened.close();
          }
        } else await check(reopened as never);
      });
    }

    for (const [key, read] of cases) {
      it(`a garbage value under ${key} rejects with StorageCorrupted naming the key`, async () => {
        await damaged(
          (store) => store.write([{ type: "put", key, value: "{not json" }]),
          async (storage) => {
            const error = await read(storage).then(
              () => undefined,
              (e: unknown) => e,
            );
            expect(error).toBeInstanceOf(StorageCorrupted);
            expect((error as StorageCorrupted).message).toContain(key);
            expect((error as StorageCorrupted).location.key).toBe(key);
          },
        );
      });
    }

    it("a well-formed JSON value of the wrong shape is corruption too", async () => {
      await damaged(
        (store) =>
          store.write([{ type: "put", key: "t/0000000000000004", value: '{"id":"four"}' }]),
        async (storage) => {
          await expect(storage.task(4 as never)).rejects.toThrow(/t\/0000000000000004/);
        },
      );
    });

    it("a missing base revision is corruption, never a guess", async () => {
      await damaged(
        (store) => store.write([{ type: "del", key: "r/0000000000000003/0000000000000001" }]),
        async (storage) => {
          const error = await storage.document(3 as never, "current").catch((e: unknown) => e);
          expect(error).toBeInstanceOf(StorageCorrupted);
          expect((error as Error).message).toMatch(/no base revision.*r\/0000000000000003/);
        },
      );
    });

    it("garbage counters make open fail with StorageCorrupted naming m/counters", async () => {
      await damaged(
        (store) => store.write([{ type: "put", key: "m/counters", value: "[]" }]),
        (result) => {
          expect(result).toBeInstanceOf(StorageCorrupted);
          expect((result as unknown as Error).message).toContain("m/counters");
          return Promise.resolve();
        },
      );
    });
  });
}
