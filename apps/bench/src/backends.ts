import { ClassicLevel } from "classic-level";
import type { Storage } from "@durably/core";
import { openJsonlStorage } from "@durably/storage-jsonl";
import { MemoryStorage } from "@durably/storage-memory";
import { openSqliteStorage } from "@durably/storage-sqlite";
import { StoreStorage, levelStore } from "@durably/storage-store";

export type BackendId =
  "memory" | "memory-1ms" | "sqlite" | "sqlite-full" | "jsonl" | "jsonl-fsync" | "store-level";

/**
 * A storage whose `commit` first waits `ms`: what a disk or network round
 * trip costs. On an instant storage the flusher never has anything queued to
 * group; this shows what group commit does once a call takes time.
 */
export function withCommitLatency<S extends Storage>(storage: S, ms: number): S {
  return new Proxy(storage, {
    get(target, key) {
      if (key === "commit")
        return async (...args: Parameters<Storage["commit"]>) => {
          await new Promise((resolve) => setTimeout(resolve, ms));
          return target.commit(...args);
        };
      const value: unknown = Reflect.get(target, key, target);
      return typeof value === "function"
        ? (value as (...a: unknown[]) => unknown).bind(target)
        : value;
    },
  });
}

/** A Durably backend as a user opens it (each package README's open function, default options). */
export interface Backend {
  id: BackendId;
  label: string;
  open(path: string): Promise<Storage>;
  /**
   * Keeps every commit on the JavaScript heap: its cases (and its raw
   * baseline) start each round from a fresh storage, so the heap, and with it
   * every garbage collection, does not grow through the run (see the bench
   * README, "Method").
   */
  freshEachRound?: boolean;
}

export const BACKENDS: readonly Backend[] = [
  {
    id: "memory",
    label: "memory",
    open: () => Promise.resolve(new MemoryStorage()),
    freshEachRound: true,
  },
  {
    id: "memory-1ms",
    label: "memory + 1 ms per storage call",
    open: () => Promise.resolve(withCommitLatency(new MemoryStorage(), 1)),
    freshEachRound: true,
  },
  { id: "sqlite", label: "SQLite (synchronous=NORMAL)", open: (path) => openSqliteStorage(path) },
  {
    id: "sqlite-full",
    label: "SQLite (synchronous=FULL)",
    open: (path) => openSqliteStorage(path, { synchronous: "full" }),
  },
  { id: "jsonl", label: "JSONL, fsync off", open: (path) => openJsonlStorage(path) },
  {
    id: "jsonl-fsync",
    label: "JSONL, fsync on",
    open: (path) => openJsonlStorage(path, { fsync: true }),
  },
  {
    id: "store-level",
    label: "store on classic-level",
    open: (path) => StoreStorage.open(levelStore(new ClassicLevel(path))),
  },
];

export function backend(id: BackendId): Backend {
  const found = BACKENDS.find((b) => b.id === id);
  if (!found) throw new RangeError(`unknown backend ${id}`);
  return found;
}
