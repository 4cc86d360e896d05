/**
 * `reopeningStorage` and `persistentStorageFactory`, the helpers adapters use
 * for their extra reopen-after-every-commit pass: the pass must catch state
 * kept only in memory that the plain run misses, and the factory must open,
 * reopen, close and remove in the order a single-owner backend needs.
 */
import { StorageClosed, type ConversationId, type EntryId, type Storage } from "@durably/core";
// By path, not by package name: see test/support/memory-handles.ts.
import { MemoryStorage } from "../../storage-memory/src/index.js";
import { describe, expect, it } from "vitest";
import {
  persistentStorageFactory,
  registerStorageConformance,
  reopeningStorage,
  type StorageFactory,
} from "../src/index.js";
import { persistentHandle } from "./support/memory-handles.js";
import { failedIn, failedNames, runRegistered } from "./support/recording-runner.js";

/** A persistent "location" over one MemoryStorage: every open is a new handle over the same data. */
function memoryLocation(open: (data: MemoryStorage) => Storage = persistentHandle) {
  return () => {
    const data = new MemoryStorage();
    return { open: () => Promise.resolve(open(data)) };
  };
}

function runSuite(factory: StorageFactory) {
  return runRegistered((api) => registerStorageConformance(api, "variant", factory));
}

const root = 1 as ConversationId;

/**
 * Answers `submissionByRequest` only with submissions committed through this
 * very instance, as an adapter would whose request index is filled by its
 * own commits and never rebuilt when it opens.
 */
function requestIndexNotRebuiltOnOpen(data: MemoryStorage): Storage {
  const handle = persistentHandle(data);
  const written = new Set<number>();
  return new Proxy(handle, {
    get(target, property, receiver) {
      if (property === "commit")
        return async (...args: Parameters<Storage["commit"]>) => {
          const result = await target.commit(...args);
          for (const batch of args[0].slice(0, result.stored))
            for (const write of batch) if (write.type === "submission") written.add(write.value.id);
          return result;
        };
      if (property === "submissionByRequest")
        return async (...args: Parameters<Storage["submissionByRequest"]>) => {
          const found = await target.submissionByRequest(...args);
          return found !== undefined && written.has(found.id) ? found : undefined;
        };
      return Reflect.get(target, property, receiver) as unknown;
    },
  });
}

describe("reopeningStorage", () => {
  it("passes every storage rule, persistence included, over a correct persistent storage", async () => {
    const outcomes = await runSuite(
      persistentStorageFactory(memoryLocation(), { reopenAfterEveryCommit: true }),
    );
    expect(failedNames(outcomes)).toEqual([]);
    expect(outcomes.filter((o) => o.status === "skipped")).toEqual([]);
  });

  it("shows an index that open never rebuilds to the submissions rules, which the plain run passes", async () => {
    const plain = await runSuite(
      persistentStorageFactory(memoryLocation(requestIndexNotRebuiltOnOpen)),
    );
    expect(failedNames(plain)).toEqual([]);
    const reopening = await runSuite(
      persistentStorageFactory(memoryLocation(requestIndexNotRebuiltOnOpen), {
        reopenAfterEveryCommit: true,
      }),
    );
    expect(failedIn(reopening, "submissions").length).toBeGreaterThan(0);
  });

  it("reopens once after every commit, before the commit resolves, and reads go to the reopened instance", async () => {
    const data = new MemoryStorage();
    const opened: Storage[] = [];
    const storage = await reopeningStorage(() => {
      const handle = persistentHandle(data);
      opened.push(handle);
      return Promise.resolve(handle);
    });
    await storage.commit([[{ type: "conversation", value: { id: root } }]], () => {});
    expect({ reopens: storage.reopens, opened: opened.length }).toEqual({ reopens: 1, opened: 2 });
    expect(await storage.conversation(root)).toEqual({ id: root });
    await storage.commit([], () => {});
    expect({ reopens: storage.reopens, opened: opened.length }).toEqual({ reopens: 2, opened: 3 });
    expect(storage.capabilities).toEqual({ persistent: true });
    await storage.close();
    await expect(opened[2]!.conversation(root)).rejects.toBeInstanceOf(StorageClosed);
    await expect(storage.conversation(root)).rejects.toBeInstanceOf(StorageClosed);
    await expect(storage.commit([], () => {})).rejects.toBeInstanceOf(StorageClosed);
    expect(opened.length).toBe(3);
  });

  it("copies batches when commit is called: a caller changing them while the commit waits in line changes nothing stored", async () => {
    const stored = new MemoryStorage();
    const storage = await reopeningStorage(() => Promise.resolve(persistentHandle(stored)));
    const first = storage.commit([[{ type: "conversation", value: { id: root } }]], () => {});
    const data = { n: 1 };
    const second = storage.commit(
      [[{ type: "entry", value: { id: 10 as EntryId, conversationId: root, kind: "note", data } }]],
      () => {},
    );
    data.n = 2;
    await Promise.all([first, second]);
    expect((await storage.entry(10 as EntryId))?.entry.data).toEqual({ n: 1 });
    await storage.close();
  });
});

describe("persistentStorageFactory", () => {
  it("closes the current instance before opening the next, closes the last one and removes the location", async () => {
    const events: string[] = [];
    let opens = 0;
    const factory = persistentStorageFactory(() => ({
      open: () => {
        const n = ++opens;
        events.push(`open ${n}`);
        const handle = persistentHandle(new MemoryStorage());
        return Promise.resolve(
          new Proxy(handle, {
            get: (target, property, receiver) =>
              property === "close"
                ? () => (events.push(`close ${n}`), target.close())
                : (Reflect.get(target, property, receiver) as unknown),
          }),
        );
      },
      remove: () => void events.push("remove"),
    }));
    await factory(async (_storage, reopen) => {
      await reopen!();
      await reopen!();
    });
    expect(events).toEqual([
      "open 1",
      "close 1",
      "open 2",
      "close 2",
      "open 3",
      "close 3",
      "remove",
    ]);
  });

  it("removes the location when the first open fails, and rejects with that error", async () => {
    const events: string[] = [];
    const factory = persistentStorageFactory(() => ({
      open: () => Promise.reject(new Error("cannot open /tmp/x")),
      remove: () => void events.push("remove"),
    }));
    await expect(factory(() => Promise.resolve())).rejects.toThrow("cannot open /tmp/x");
    expect(events).toEqual(["remove"]);
  });
});
