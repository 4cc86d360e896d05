import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import type { Storage } from "@durably/core";
import { openJsonlStorage } from "@durably/storage-jsonl";
import { MemoryStorage } from "@durably/storage-memory";
import { openSqliteStorage } from "@durably/storage-sqlite";
import { StoreStorage, levelStore } from "@durably/storage-store";
import { ClassicLevel } from "classic-level";
import type { BackendName } from "./backend-names.js";
import { SQLITE_FILE } from "./detect.js";

export interface Backend {
  readonly name: BackendName;
  /** How the tables call it: "SQLite", "Store (LevelDB)". */
  readonly title: string;
  /** Data survives close and reopen (false for memory). */
  readonly persistent: boolean;
  /** Where in `dir` the data lives: the SQLite file, or the directory itself. */
  location(dir: string): string;
  /** Opens (creating if needed) the storage kept in `dir`. */
  open(dir: string): Promise<Storage>;
}

export function classicLevel(dir: string): ClassicLevel<string, string> {
  return new ClassicLevel<string, string>(dir, { keyEncoding: "utf8", valueEncoding: "utf8" });
}

export const BACKENDS: Readonly<Record<BackendName, Backend>> = {
  memory: {
    name: "memory",
    title: "memory",
    persistent: false,
    location: () => "(process memory)",
    open: () => Promise.resolve(new MemoryStorage()),
  },
  sqlite: {
    name: "sqlite",
    title: "SQLite",
    persistent: true,
    location: (dir) => join(dir, SQLITE_FILE),
    async open(dir) {
      await mkdir(dir, { recursive: true });
      return openSqliteStorage(join(dir, SQLITE_FILE));
    },
  },
  jsonl: {
    name: "jsonl",
    title: "JSONL",
    persistent: true,
    location: (dir) => dir,
    async open(dir) {
      await mkdir(dir, { recursive: true });
      return openJsonlStorage(dir);
    },
  },
  store: {
    name: "store",
    title: "Store (LevelDB)",
    persistent: true,
    location: (dir) => dir,
    async open(dir) {
      await mkdir(dir, { recursive: true });
      return StoreStorage.open(levelStore(classicLevel(dir)));
    },
  },
};

export const ALL_BACKENDS: readonly Backend[] = [
  BACKENDS.memory,
  BACKENDS.sqlite,
  BACKENDS.jsonl,
  BACKENDS.store,
];
