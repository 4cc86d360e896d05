import { describe, expect, it } from "vitest";
import {
  BatchRefused,
  StorageCorrupted,
  StoragePoisoned,
  StorageRequestError,
  type ConversationId,
  type DocumentId,
  type Seq,
  type StorageWrite,
  type TaskRecord,
} from "@durably/core";
import {
  StoreStorage,
  dumpKeys,
  type KeyValueOp,
  type KeyValueStore,
  type RangeOptions,
} from "../src/index.js";
import { backends, withFreshStore } from "./backends.js";

/** A pass-through port that counts writes and can fail the next one (fault injection at the port). */
class CountingStore implements KeyValueStore {
  writes: KeyValueOp[][] = [];
  failNext = false;
  constructor(private readonly inner: KeyValueStore) {}
  get persistent() {
    return this.inner.persistent;
  }
  open() {
    return this.inner.open?.() ?? Promise.resolve();
  }
  get(key: string) {
    return this.inner.get(key);
  }
  range(options: RangeOptions) {
    return this.inner.range(options);
  }
  write(ops: readonly KeyValueOp[]) {
    if (this.failNext) {
      this.failNext = false;
      return Promise.reject(new Error("disk on fire"));
    }
    this.writes.push([...ops]);
    return this.inner.write(ops);
  }
  close() {
    return this.inner.close();
  }
}

const C = 1 as ConversationId;
const conversation = (id: number): StorageWrite => ({
  type: "conversation",
  value: { id: id as ConversationId },
});
const entry = (id: number, conversationId = 1, extra: object = {}): StorageWrite =>
  ({
    type: "entry",
    value: { id, conversationId, kind: "note", data: `entry ${id}`, ...extra },
  }) as unknown as StorageWrite;
const doc = (id: number, history?: "rewindable", key?: string): StorageWrite =>
  ({
    type: "document.create",
    record: {
      id,
      kind: "app.notes",
      scope: { kind: "conversation", conversationId: 1 },
      ...(history ? { history } : {}),
      ...(key !== undefined ? { key } : {}),
    },
    content: { kind: "base", version: 1, value: { text: "" } },
  }) as unknown as StorageWrite;
const set = (id: number, text: string): StorageWrite =>
  ({
    type: "document.change",
    id,
    content: { kind: "delta", version: 1, ops: [["s", ["text"], text]] },
  }) as unknown as StorageWrite;
const base = (id: number, text: string): StorageWrite =>
  ({
    type: "document.change",
    id,
    content: { kind: "base", version: 1, value: { text } },
  }) as unknown as StorageWrite;
const task = (
  id: number,
  status: "pending" | "running" | "terminal",
  extra: Partial<TaskRecord> = {},
): StorageWrite =>
  ({
    type: "task",
    value: {
      id,
      conversationId: 1,
      kind: "app.job",
      version: 1,
      input: null,
      background: false,
      abortRequested: false,
      state:
        status === "terminal"
          ? { status, outcome: { kind: "completed" } }
          : { status, checkpoint: null },
      ...extra,
    },
  }) as unknown as StorageWrite;

const noReceive = () => undefined;

for (const backend of backends) {
  async function withStorage(run: (storage: StoreStorage, store: CountingStore) => Promise<void>) {
    const { store, cleanup } = backend.fresh();
    const counting = new CountingStore(store);
    const storage = await StoreStorage.open(counting);
    try {
      await run(storage, counting);
    } finally {
      await storage.close();
      cleanup();
    }
  }
  const keys = async (store: KeyValueStore, prefix?: string) =>
    (await dumpKeys(store, prefix === undefined ? {} : { prefix })).map((p) => p.key);

  describe(`StoreStorage on ${backend.name} > one commit call is one atomic write`, () => {
    it("writes every batch of a call, the counters and nothing else in one store write", async () => {
      await withStorage(async (storage, store) => {
        const seqs: number[] = [];
        const result = await storage.commit([[conversation(1), entry(2)], [entry(3)], []], (i, s) =>
          seqs.push(s),
        );
        expect(result).toEqual({ stored: 3 });
        expect(seqs).toEqual([1, 2, 3]);
        expect(store.writes).toHaveLength(1);
        const written = (store.writes[0] ?? []).map((op) => op.key);
        expect(written).toContain("m/counters");
        // One commit-chain marker for the whole call, named by its first seq.
        expect(written.filter((key) => key.startsWith("l/"))).toEqual(["l/0000000000000001"]);
        const counters = JSON.parse((await store.get("m/counters"))?.slice(8) ?? "null") as unknown;
        expect(counters).toMatchObject({ seq: 3, ids: 3, verified: 0 });
      });
    });

    it("a refused batch never reaches the store; earlier batches of the call do", async () => {
      await withStorage(async (storage, store) => {
        await storage.commit([[conversation(1), entry(2)]], noReceive);
        const before = await dumpKeys(store);
        const result = await storage.commit(
          [[entry(3)], [entry(4), entry(2)], [entry(5)]],
          noReceive,
        );
        expect(result.stored).toBe(1);
        expect(result.refused).toBeInstanceOf(BatchRefused);
        expect((result.refused as BatchRefused).reason).toBe("immutable-record");
        const after = await keys(store);
        expect(after.filter((k) => !before.some((p) => p.key === k)).sort()).toEqual(
          [
            "e/0000000000000001/0000000000000003",
            "ei/0000000000000003",
            "l/0000000000000002",
          ].sort(),
        );
        expect(await storage.entry(4 as never)).toBeUndefined();
        expect(store.writes).toHaveLength(2);
      });
    });

    it("a call whose first batch is refused writes nothing at all", async () => {
      await withStorage(async (storage, store) => {
        const result = await storage.commit([[entry(2, 9)]], noReceive);
        expect((result.refused as BatchRefused).reason).toBe("unknown-conversation");
        expect(store.writes).toHaveLength(0);
        expect(await keys(store)).toEqual([]);
      });
    });

    it("a failed write poisons the storage: the commit rejects and every later call rejects", async () => {
      await withStorage(async (storage, store) => {
        store.failNext = true;
        await expect(storage.commit([[conversation(1)]], noReceive)).rejects.toThrow(
          "disk on fire",
        );
        await expect(storage.conversation(C)).rejects.toBeInstanceOf(StoragePoisoned);
        await expect(storage.commit([[conversation(1)]], noReceive)).rejects.toBeInstanceOf(
          StoragePoisoned,
        );
        await expect(storage.mintId()).rejects.toBeInstanceOf(StoragePoisoned);
      });
    });
  });

  describe(`StoreStorage on ${backend.name} > key layout`, () => {
    it("orders ids numerically (fixed width), not as text", async () => {
      await withStorage(async (storage) => {
        await storage.commit(
          [[conversation(1), entry(9), entry(10), entry(100), entry(1000)]],
          noReceive,
        );
        const page = await storage.scanEntries({ conversationId: C, order: "ascending" }, 10);
        expect(page.items.map((e) => e.id)).toEqual([9, 10, 100, 1000]);
        const newest = await storage.scanEntries({ conversationId: C }, 2);
        expect(newest.items.map((e) => e.id)).toEqual([1000, 100]);
        const rest = await storage.scanEntries({ conversationId: C }, 2, newest.next);
        expect(rest.items.map((e) => e.id)).toEqual([10, 9]);
        expect(rest.next).toBeUndefined();
      });
    });

    it("keeps user strings with separators and non-ASCII apart: kinds, document keys and request ids", async () => {
      await withStorage(async (storage, store) => {
        const writes: StorageWrite[] = [conversation(1)];
        const names = ["a/b", "a", "a%b", "ä", "😀", "", "-"];
        names.forEach((key, i) =>
          writes.push({
            ...(doc(10 + i, undefined, key) as object),
            record: {
              ...(doc(10 + i, undefined, key) as { record: object }).record,
              kind: `k/${key}`,
            },
          } as StorageWrite),
        );
        names.forEach((requestId, i) =>
          writes.push({
            type: "submission",
            value: { id: 30 + i, conversationId: C, type: "input", status: "queued", requestId },
          } as StorageWrite),
        );
        expect(await storage.commit([writes], noReceive)).toEqual({ stored: 1 });
        for (const [i, key] of names.entries()) {
          const found = await storage.findDocument(
            { kind: `k/${key}`, scope: { kind: "conversation", conversationId: C }, key },
            "current",
          );
          expect(found?.id).toBe(10 + i);
          expect((await storage.submissionByRequest(C, key))?.id).toBe(30 + i);
        }
        expect(
          await storage.findDocument(
            { kind: "k/a", scope: { kind: "conversation", conversationId: C } },
            "current",
          ),
        ).toBeUndefined();
        for (const key of await keys(store)) expect(key).toMatch(/^[\x21-\x7e]+$/);
      });
    });

    it("removes stale secondary keys when a task is replaced", async () => {
      await withStorage(async (storage, store) => {
        await storage.commit(
          [[conversation(1), conversation(2), task(5, "pending", { owner: 7 as never })]],
          noReceive,
        );
        await storage.commit(
          [[task(5, "terminal", { conversationId: 2 as ConversationId, kind: "app.other" })]],
          noReceive,
        );
        expect(await keys(store, "ts/")).toEqual(["ts/terminal/0000000000000005"]);
        expect(await keys(store, "tc/")).toEqual(["tc/0000000000000002/0000000000000005"]);
        expect(await keys(store, "tk/")).toEqual(["tk/app.other/0000000000000005"]);
        expect(await keys(store, "to/")).toEqual([]);
        expect((await storage.scanTasks({ status: "pending" }, 10)).items).toEqual([]);
        expect((await storage.scanTasks({ owner: 7 as never }, 10)).items).toEqual([]);
        expect(
          (
            await storage.scanTasks({ conversationId: 2 as ConversationId, status: "terminal" }, 10)
          ).items.map((t) => t.id),
        ).toEqual([5]);
      });
    });

    it("removes stale secondary keys when a submission is replaced", async () => {
      await withStorage(async (storage, store) => {
        const sub = (status: string, requestId?: string) =>
          ({
            type: "submission",
            value: {
              id: 5,
              conversationId: C,
              type: "input",
              status,
              ...(requestId ? { requestId } : {}),
            },
          }) as StorageWrite;
        await storage.commit([[conversation(1), sub("queued", "q1")]], noReceive);
        await storage.commit([[sub("done", "q2")]], noReceive);
        expect(await keys(store, "sr/")).toEqual(["sr/0000000000000001/q2/0000000000000005"]);
        expect(await storage.submissionByRequest(C, "q1")).toBeUndefined();
        expect(
          (await storage.scanSubmissions({ conversationId: C, status: "queued" }, 10)).items,
        ).toEqual([]);
        expect(
          (await storage.scanSubmissions({ conversationId: C, status: "done" }, 10)).items.map(
            (s) => s.id,
          ),
        ).toEqual([5]);
      });
    });
  });

  describe(`StoreStorage on ${backend.name} > document revisions`, () => {
    it("reclaims a current-only document's older revisions in the write that stores a new base", async () => {
      await withStorage(async (storage, store) => {
        await storage.commit([[conversation(1), doc(3)], [set(3, "a")], [set(3, "ab")]], noReceive);
        expect(await keys(store, "r/")).toHaveLength(3);
        await storage.commit([[base(3, "fresh")], [set(3, "fresh!")]], noReceive);
        expect(await keys(store, "r/")).toEqual([
          "r/0000000000000003/0000000000000004",
          "r/0000000000000003/0000000000000005",
        ]);
        const current = await storage.document(3 as DocumentId, "current");
        expect(current).toMatchObject({ value: { text: "fresh!" }, deltasSinceBase: 1 });
        await expect(storage.document(3 as DocumentId, 2 as Seq)).rejects.toMatchObject({
          reason: "history-unavailable",
        });
      });
    });

    it("reclaims every revision of a retired current-only document, keeps its record", async () => {
      await withStorage(async (storage, store) => {
        await storage.commit(
          [
            [conversation(1), doc(3)],
            [set(3, "a"), { type: "document.retire", id: 3 as DocumentId }],
          ],
          noReceive,
        );
        expect(await keys(store, "r/")).toEqual([]);
        expect(await storage.document(3 as DocumentId, "current")).toBeUndefined();
        await expect(storage.document(3 as DocumentId, 1 as Seq)).rejects.toBeInstanceOf(
          StorageRequestError,
        );
        const found = await storage.findDocument(
          { kind: "app.notes", scope: { kind: "conversation", conversationId: C } },
          1 as Seq,
        );
        expect(found).toMatchObject({ id: 3, createdAt: 1, retiredAt: 2 });
      });
    });

    it("keeps every revision of a rewindable document, through bases and retirement", async () => {
      await withStorage(async (storage, store) => {
        await storage.commit(
          [
            [conversation(1), doc(3, "rewindable")],
            [set(3, "a")],
            [base(3, "b")],
            [set(3, "bc")],
            [{ type: "document.retire", id: 3 as DocumentId }],
          ],
          noReceive,
        );
        expect(await keys(store, "r/")).toHaveLength(4);
        const at = async (seq: number) =>
          (await storage.document(3 as DocumentId, seq as Seq))?.value;
        expect([await at(1), await at(2), await at(3), await at(4), await at(5)]).toEqual([
          { text: "" },
          { text: "a" },
          { text: "b" },
          { text: "bc" },
          undefined,
        ]);
      });
    });

    it("copies a document at an earlier seq from one range read of the source's revisions", async () => {
      await withStorage(async (storage) => {
        await storage.commit(
          [[conversation(1), doc(3, "rewindable")], [set(3, "a")], [set(3, "ab")]],
          noReceive,
        );
        const copy: StorageWrite = {
          type: "document.copy",
          record: {
            id: 4 as DocumentId,
            kind: "app.notes",
            scope: { kind: "conversation", conversationId: 2 as ConversationId },
          },
          source: { id: 3 as DocumentId, at: 2 as Seq },
        };
        expect(await storage.commit([[conversation(2), copy]], noReceive)).toEqual({ stored: 1 });
        expect(await storage.document(4 as DocumentId, "current")).toMatchObject({
          value: { text: "a" },
          deltasSinceBase: 0,
          record: { createdAt: 4 },
        });
      });
    });
  });

  describe(`StoreStorage on ${backend.name} > detachment and ids`, () => {
    it("copies batches before commit returns control and returns fresh objects", async () => {
      await withStorage(async (storage) => {
        const write = entry(2) as { value: { data: unknown } };
        const pending = storage.commit([[conversation(1), write as StorageWrite]], noReceive);
        write.value.data = "changed";
        await pending;
        const read = await storage.entry(2 as never);
        expect(read?.entry.data).toBe("entry 2");
        (read?.entry as { data: unknown }).data = "mutated";
        expect((await storage.entry(2 as never))?.entry.data).toBe("entry 2");
      });
    });

    it("refuses a batch holding a non-JSON value as invalid-write, naming the path", async () => {
      await withStorage(async (storage, store) => {
        const bad = {
          type: "entry",
          value: { id: 2, conversationId: 1, kind: "n", data: [NaN] },
        } as unknown as StorageWrite;
        const result = await storage.commit([[conversation(1)], [bad]], noReceive);
        expect(result.stored).toBe(1);
        expect(result.refused).toMatchObject({
          reason: "invalid-write",
          batchIndex: 1,
          writeIndex: 0,
        });
        expect(result.refused?.message).toContain("batches[1][0].value.data[0]");
        expect(await keys(store, "e/")).toEqual([]);
      });
    });

    it("mints ids above every id a stored batch used, even ids it never minted", async () => {
      await withStorage(async (storage) => {
        expect(await storage.mintId()).toBe(2);
        await storage.commit([[conversation(1), entry(50)]], noReceive);
        expect(await storage.mintId()).toBe(51);
      });
    });
  });

  if (backend.persistent) {
    describe(`StoreStorage on ${backend.name} > reopen`, () => {
      it("keeps seqs, the id high-water mark and every record across reopen", async () => {
        await withFreshStore(backend, async ({ store, reopen }) => {
          const first = await StoreStorage.open(store);
          expect(first.capabilities.persistent).toBe(true);
          await first.commit([[conversation(1), entry(2), doc(3)], [set(3, "x")]], noReceive);
          const minted = await first.mintId();
          await first.commit([[]], noReceive);
          await first.close();
          const second = await StoreStorage.open((reopen as () => KeyValueStore)());
          const seqs: number[] = [];
          await second.commit([[entry(await second.mintId())]], (_i, s) => seqs.push(s));
          expect(seqs).toEqual([4]);
          expect(await second.mintId()).toBeGreaterThan(minted);
          expect(await second.document(3 as DocumentId, "current")).toMatchObject({
            value: { text: "x" },
          });
          await second.close();
        });
      });

      it("refuses to open a non-empty store that is not a Durably store", async () => {
        await withFreshStore(backend, async ({ store, reopen }) => {
          await store.open?.();
          await store.write([{ type: "put", key: "user/data", value: "1" }]);
          await store.close();
          await expect(StoreStorage.open((reopen as () => KeyValueStore)())).rejects.toBeInstanceOf(
            StorageCorrupted,
          );
        });
      });
    });
  }
}
