import { StorageClosed, type Batch, type Storage, type TaskRecord } from "@durably/core";
// By path, not by package name: a devDependency on storage-memory (which runs
// these suites) would make the workspace graph cyclic.
import { MemoryStorage } from "../../../storage-memory/src/index.js";
import type { StorageFactory } from "../../src/index.js";

/**
 * A handle over one shared MemoryStorage that outlives the handle: closing
 * and reopening keeps the data, like a database file. It lets the
 * persistence scenarios and the suites' reopen plumbing run without a disk.
 */
export function persistentHandle(data: MemoryStorage, mint?: () => Promise<number>): Storage {
  let closed = false;
  return new Proxy(data, {
    get(target, property, receiver) {
      if (property === "capabilities") return { persistent: true };
      if (property === "close")
        return () => {
          closed = true;
          return Promise.resolve();
        };
      if (closed) return () => Promise.reject(new StorageClosed("handle is closed"));
      if (property === "mintId" && mint !== undefined) return mint;
      const value: unknown = Reflect.get(target, property, receiver);
      return typeof value === "function"
        ? (value as (...args: unknown[]) => unknown).bind(target)
        : value;
    },
  });
}

/** Forgets its minted-id high-water mark on reopen: counts from 2 in every handle. */
export function forgetsIdsOnReopen(data: MemoryStorage): Storage {
  let next = 2;
  return persistentHandle(data, () => Promise.resolve(next++));
}

/** Builds a factory with reopen over `open(data)`; each test gets fresh data. */
export function reopenable(open: (data: MemoryStorage) => Storage): StorageFactory {
  return async (use) => {
    const data = new MemoryStorage();
    let current = open(data);
    try {
      await use(current, async () => {
        await current.close();
        current = open(data);
        return current;
      });
    } finally {
      await current.close();
    }
  };
}

/** A factory without reopen: a fresh storage from `make()` per test. */
export function simpleFactory(make: () => Storage): StorageFactory {
  return async (use) => {
    const storage = make();
    try {
      await use(storage);
    } finally {
      await storage.close();
    }
  };
}

/**
 * Stores only the first write of each task and submission of a commit call
 * (as a log collapsed by call on open would keep the wrong one), while this
 * handle serves the last written values from memory: right until reopen.
 */
export function keepsFirstReplacementOfACall(data: MemoryStorage): Storage {
  const handle = persistentHandle(data);
  const latest = new Map<string, unknown>();
  return new Proxy(handle, {
    get(target, property, receiver) {
      if (property === "commit")
        return async (batches: readonly Batch[], ...rest: [never, never?]) => {
          const seen = new Set<string>();
          const firstOnly = batches.map((batch) =>
            batch.filter((write) => {
              if (write.type !== "task" && write.type !== "submission") return true;
              const key = `${write.type} ${write.value.id}`;
              latest.set(key, structuredClone(write.value));
              if (seen.has(key)) return false;
              seen.add(key);
              return true;
            }),
          );
          return target.commit(firstOnly, ...rest);
        };
      if (property === "task" || property === "submission")
        return async (id: number) => {
          const kept = latest.get(`${property} ${id}`);
          return kept === undefined
            ? target[property](id as never)
            : (structuredClone(kept) as TaskRecord);
        };
      return Reflect.get(target, property, receiver) as unknown;
    },
  });
}
