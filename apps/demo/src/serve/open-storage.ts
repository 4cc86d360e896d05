import Database from "better-sqlite3";
import pg from "pg";
import { join } from "node:path";
import { StorageLocked, type Storage } from "@durably/core";
import { openJsonlStorage } from "@durably/storage-jsonl";
import { MemoryStorage } from "@durably/storage-memory";
import { openPostgresStorage } from "@durably/storage-postgres";
import { BetterSqlite3Database, SqliteStorage } from "@durably/storage-sqlite";
import { levelStore, StoreStorage } from "@durably/storage-store";
import { ClassicLevel } from "classic-level";
import { CliError } from "../cli.js";
import { detectBackend } from "../detect.js";
import { failureReason, PG_SCHEMA, redactPgUrl } from "../postgres-config.js";
import { posixLockPid } from "./lock-holder.js";
import { jsonlPanel } from "./panel/jsonl-panel.js";
import { postgresPanel } from "./panel/postgres-panel.js";
import type { PanelReader } from "./panel/section.js";
import { sqlitePanel } from "./panel/sqlite-panel.js";
import { storePanel } from "./panel/store-panel.js";
import type { Target } from "./target.js";

export interface OpenedStorage {
  storage: Storage;
  panel: PanelReader;
}

const memoryPanel: PanelReader = {
  read: () =>
    Promise.resolve({
      summary:
        "Memory storage: the records live in this process only; nothing is written anywhere, and stopping the server loses them.",
      sections: [],
    }),
  close: () => Promise.resolve(),
};

/**
 * A file backend's files may have gone (or changed kind) since `serve`
 * started, e.g. while it waited for a lock: look again, so an open never
 * creates a new storage where one was.
 */
async function stillThere(target: Target): Promise<void> {
  if (target.backend === "sqlite" || target.backend === "jsonl" || target.backend === "store") {
    const where = target.backend === "sqlite" ? target.file : target.dir;
    const found = await detectBackend(where);
    if (found.backend !== target.backend)
      throw new CliError(`${where}: now holds ${found.backend} storage, not ${target.backend}`);
  }
}

/** Opening a PostgreSQL session that does not exist would create it: check first, read only. */
async function requireSession(url: string, session: string): Promise<void> {
  const pool = new pg.Pool({ connectionString: url, max: 1, connectionTimeoutMillis: 10_000 });
  pool.on("error", () => undefined);
  try {
    const found = await pool.query<{ exists: boolean }>(
      `SELECT to_regclass($1) IS NOT NULL AS exists`,
      [`${PG_SCHEMA}.sessions`],
    );
    const where = `the PostgreSQL server ${redactPgUrl(url)}`;
    if (found.rows[0]?.exists !== true)
      throw new CliError(`${where} holds no Durably schema ${PG_SCHEMA}`);
    const rows = await pool.query(`SELECT 1 FROM ${PG_SCHEMA}.sessions WHERE session_key = $1`, [
      session,
    ]);
    if (rows.rowCount === 0)
      throw new CliError(
        `${where} holds no Durably session ${JSON.stringify(session)} in schema ${PG_SCHEMA}`,
      );
  } catch (error) {
    if (error instanceof CliError) throw error;
    throw new Error(
      `cannot read the PostgreSQL server ${redactPgUrl(url)}: ${failureReason(error)}`,
      {
        cause: error,
      },
    );
  } finally {
    await pool.end();
  }
}

/**
 * Opens the target as its single owner, with a panel reader that sees what
 * the backend stored. Never creates a storage: files must still be there
 * (SQLite opens with `fileMustExist`), a PostgreSQL session must exist.
 */
export async function openTarget(target: Target): Promise<OpenedStorage> {
  await stillThere(target);
  switch (target.backend) {
    case "memory":
      return { storage: new MemoryStorage(), panel: memoryPanel };
    case "sqlite": {
      let db: BetterSqlite3Database;
      try {
        db = new BetterSqlite3Database(new Database(target.file, { fileMustExist: true }));
      } catch (error) {
        throw new Error(`${target.file}: ${(error as Error).message}`, { cause: error });
      }
      const storage = await SqliteStorage.open(db, { location: target.file, persistent: true });
      return { storage, panel: sqlitePanel(db, target.file) };
    }
    case "jsonl": {
      const storage = await openJsonlStorage(target.dir);
      const taskConversation = async (id: number) =>
        (await storage.task(id as Parameters<typeof storage.task>[0]))?.conversationId;
      return { storage, panel: jsonlPanel(target.dir, taskConversation) };
    }
    case "store": {
      // LevelDB rotates its LOG file before it finds the lock taken: look first, touch nothing.
      const pid = await posixLockPid(join(target.dir, "LOCK"));
      if (pid !== undefined && pid !== process.pid)
        throw new StorageLocked(
          `${target.dir} is locked: process ${pid} has the LevelDB database open (it holds the LOCK file)`,
          { holder: `pid ${pid}` },
        );
      const store = levelStore(
        new ClassicLevel<string, string>(target.dir, {
          keyEncoding: "utf8",
          valueEncoding: "utf8",
        }),
      );
      const storage = await StoreStorage.open(store);
      return { storage, panel: storePanel(store, target.dir) };
    }
    case "postgres": {
      await requireSession(target.url, target.session);
      const storage = await openPostgresStorage({
        connectionString: target.url,
        session: target.session,
        poolConfig: { max: 2, connectionTimeoutMillis: 10_000 },
      });
      return { storage, panel: postgresPanel(target.url, target.session) };
    }
  }
}
