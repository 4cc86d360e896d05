import { StorageClosed, type Storage } from "@durably/core";
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
