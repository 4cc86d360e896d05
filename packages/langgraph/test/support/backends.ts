import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Storage } from "@durably/core";
import { openJsonlStorage } from "@durably/storage-jsonl";
import { MemoryStorage } from "@durably/storage-memory";
import { openPostgresStorage } from "@durably/storage-postgres";
import { openSqliteStorage } from "@durably/storage-sqlite";
import { StoreStorage, levelStore } from "@durably/storage-store";
import { ClassicLevel } from "classic-level";

/** A real backend: `open` makes a fresh, empty storage; `reopen` opens the same one again. */
export interface Backend {
  name: string;
  persistent: boolean;
  /** A new place (directory, file, database session); clean it with `remove`. */
  place(): string;
  open(place: string): Promise<Storage>;
  remove(place: string): void;
}

const tempDir = (prefix: string): string => mkdtempSync(join(tmpdir(), `durably-lg-${prefix}-`));
const removeDir = (place: string): void => rmSync(place, { recursive: true, force: true });

export const memoryBackend: Backend = {
  name: "memory",
  persistent: false,
  place: () => "memory",
  open: () => Promise.resolve(new MemoryStorage()),
  remove: () => undefined,
};

export const sqliteBackend: Backend = {
  name: "SQLite",
  persistent: true,
  place: () => tempDir("sqlite"),
  open: (dir) => openSqliteStorage(join(dir, "durably.sqlite")),
  remove: removeDir,
};

export const jsonlBackend: Backend = {
  name: "JSONL",
  persistent: true,
  place: () => tempDir("jsonl"),
  open: (dir) => openJsonlStorage(dir),
  remove: removeDir,
};

export const storeBackend: Backend = {
  name: "store (classic-level)",
  persistent: true,
  place: () => tempDir("level"),
  open: (dir) => StoreStorage.open(levelStore(new ClassicLevel(join(dir, "db")))),
  remove: removeDir,
};

/** PostgreSQL: a place is a session key of the shared test database. */
export function postgresBackend(url: string): Backend {
  return {
    name: "PostgreSQL",
    persistent: true,
    place: () => `langgraph-${randomUUID()}`,
    open: (session) =>
      openPostgresStorage({ connectionString: url, session, poolConfig: { max: 2 } }),
    remove: () => undefined,
  };
}
