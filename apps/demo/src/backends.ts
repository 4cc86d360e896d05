import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import type { Storage } from "@durably/core";
import { openJsonlStorage } from "@durably/storage-jsonl";
import { MemoryStorage } from "@durably/storage-memory";
import { openPostgresStorage } from "@durably/storage-postgres";
import { openSqliteStorage } from "@durably/storage-sqlite";
import { StoreStorage, levelStore } from "@durably/storage-store";
import { ClassicLevel } from "classic-level";
import type { BackendName } from "./backend-names.js";
import { SQLITE_FILE } from "./detect.js";
import {
  failureReason,
  PG_SCHEMA,
  PG_URL_VAR,
  pgSession,
  pgUrl,
  PostgresUnavailable,
  redactPgUrl,
  requirePgUrl,
} from "./postgres-config.js";

export interface Backend {
  readonly name: BackendName;
  /** How the tables call it: "SQLite", "Store (LevelDB)". */
  readonly title: string;
  /** Data survives close and reopen (false for memory). */
  readonly persistent: boolean;
  /** Where in `dir` the data lives: the SQLite file, the directory itself, or the server and session. */
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
  postgres: {
    name: "postgres",
    title: "PostgreSQL",
    persistent: true,
    location(dir) {
      const url = pgUrl();
      const server = url === undefined ? `(${PG_URL_VAR} not set)` : redactPgUrl(url);
      return `${server}, schema ${PG_SCHEMA}, session_key ${JSON.stringify(pgSession(dir))}`;
    },
    async open(dir) {
      const url = requirePgUrl();
      try {
        return await openPostgresStorage({
          connectionString: url,
          session: pgSession(dir),
          // A server that never answers fails the run instead of hanging it.
          poolConfig: { max: 2, connectionTimeoutMillis: 10_000 },
        });
      } catch (error) {
        throw new PostgresUnavailable(
          `cannot use the PostgreSQL server ${redactPgUrl(url)} (from ${PG_URL_VAR}): ${failureReason(error)}`,
          { cause: error },
        );
      }
    },
  },
};

/** The backends that need nothing but this machine: memory and the three file-based ones. */
export const LOCAL_BACKENDS: readonly Backend[] = [
  BACKENDS.memory,
  BACKENDS.sqlite,
  BACKENDS.jsonl,
  BACKENDS.store,
];

/**
 * The backends a tour runs on, decided when it runs: the local ones, then
 * PostgreSQL if `DURABLY_PG_URL` names a server. Set but unreachable is an
 * error when the backend opens, never a silent skip.
 */
export function tourBackends(env: NodeJS.ProcessEnv = process.env): readonly Backend[] {
  return pgUrl(env) === undefined ? LOCAL_BACKENDS : [...LOCAL_BACKENDS, BACKENDS.postgres];
}
