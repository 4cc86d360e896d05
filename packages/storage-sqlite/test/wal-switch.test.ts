import { readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { StorageIOError, type ConversationId } from "@durably/core";
import { BetterSqlite3Database, SqliteStorage, openSqliteStorage } from "../src/index.js";
import type { SqliteDatabase, SqlParams } from "../src/index.js";
import { tempDir } from "./helpers.js";
import { childUnderStrace, straceProblem } from "./support/strace.js";

const CHILD = fileURLToPath(new URL("./crash/wal-switch-child.ts", import.meta.url));

const problem = straceProblem();
if (problem !== undefined) console.warn(`WAL switch fault tests skipped: ${problem}`);

let dir: ReturnType<typeof tempDir>;
let path: string;
beforeEach(() => {
  dir = tempDir("durably-sqlite-wal-switch-");
  path = join(dir.dir, "new.sqlite");
});
afterEach(() => dir.cleanup());

/** The file header's read/write format versions: 2/2 for WAL, 1/1 for a rollback journal. */
function headerVersions(file: string): number[] {
  const header = readFileSync(file).subarray(18, 20);
  return [header[0] as number, header[1] as number];
}

describe("opening a new file fails when SQLite cannot switch it to WAL (real faults through strace -e inject)", () => {
  it.skipIf(problem !== undefined)(
    "an fsync of the rollback journal failing with EIO while the new file enters WAL fails the open with StorageIOError naming the file; nothing runs in rollback-journal mode",
    async () => {
      // SQLite writes the WAL marker into the new file's header through the rollback journal
      // (the first fsync of -journal is the empty journal header, the second its content).
      const report = childUnderStrace(
        [path, `${path}-journal`, `${path}-wal`],
        "fsync",
        "fsync:error=EIO:when=2",
        CHILD,
        [path],
      );
      expect(report, JSON.stringify(report)).toMatchObject({
        open: "rejected",
        name: "StorageIOError",
        code: "STORAGE_IO",
        file: path,
      });
      expect(report.cause as string).toMatch(/^SQLITE_IOERR/);
      expect(report.message as string).toContain(path);
      expect(report.message as string).toMatch(/write-ahead log/);
      // Without the fault the same file opens in WAL mode.
      const storage = await openSqliteStorage(path);
      await storage.commit(
        [[{ type: "conversation", value: { id: 1 as ConversationId } }]],
        () => {},
      );
      expect(headerVersions(path)).toEqual([2, 2]);
      await storage.close();
    },
  );
});

/**
 * A driver whose answers to two pragmas are replaced, for drivers (or VFSs)
 * that report a mode other than the one asked for without an error.
 */
function answering(pragma: string, row: Record<string, string>): SqliteDatabase {
  const real = BetterSqlite3Database.open(path);
  const replace = <Row>(sql: string, rows: () => Promise<Row[]>): Promise<Row[]> =>
    sql.replace(/\s+/g, " ").startsWith(pragma) ? Promise.resolve([row as Row]) : rows();
  return {
    exec: (sql) => real.exec(sql),
    run: (sql, params) => real.run(sql, params),
    get: <Row>(sql: string, params?: SqlParams) =>
      replace<Row>(sql, async () => {
        const one = await real.get<Row>(sql, params);
        return one === undefined ? [] : [one];
      }).then((rows) => rows[0]),
    all: <Row>(sql: string, params?: SqlParams) =>
      replace<Row>(sql, () => real.all<Row>(sql, params)),
    transaction: (work, options) => real.transaction(work, options),
    close: () => real.close(),
  };
}

describe("opening checks the journal and locking modes SQLite reports", () => {
  it.each([
    [
      "PRAGMA journal_mode = WAL",
      { journal_mode: "delete" },
      /write-ahead log: SQLite answered journal_mode "delete" where "wal" was asked/,
    ],
    [
      "PRAGMA locking_mode = EXCLUSIVE",
      { locking_mode: "normal" },
      /exclusive lock: SQLite answered locking_mode "normal" where "exclusive" was asked/,
    ],
  ])(
    "a driver answering %s with %j fails the open with StorageIOError naming the file and both modes",
    async (pragma, row, pattern) => {
      const error = await SqliteStorage.open(answering(pragma, row), { location: path }).catch(
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(StorageIOError);
      expect((error as StorageIOError).location).toEqual({ file: path });
      expect((error as Error).message).toContain(path);
      expect((error as Error).message).toMatch(pattern);
      // The failed open released the file.
      const storage = await openSqliteStorage(path);
      await storage.close();
    },
  );

  it("an in-memory database is accepted in its own journal mode", async () => {
    const storage = await openSqliteStorage(":memory:");
    await storage.commit(
      [[{ type: "conversation", value: { id: 1 as ConversationId } }]],
      () => {},
    );
    await storage.close();
  });
});
