import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { StorageCorrupted, StorageLocked, StorageVersionError } from "@durably/core";
import { openSqliteStorage, SCHEMA_VERSION } from "../src/index.js";
import { commitRoot, editDatabase, openFailure, tempDir } from "./helpers.js";

// A refused open changes nothing: whether a file is ours is decided reading
// only, before any pragma that writes (the switch to WAL rewrites the header).

let dir: ReturnType<typeof tempDir>;
let path: string;
beforeEach(() => {
  dir = tempDir("durably-sqlite-refusals-");
  path = join(dir.dir, "app.sqlite");
});
afterEach(() => dir.cleanup());

/** Every file in the directory with its bytes, to show a refused open changed nothing. */
function snapshot(): Map<string, Buffer> {
  return new Map(readdirSync(dir.dir).map((name) => [name, readFileSync(join(dir.dir, name))]));
}

function expectUnchanged(before: Map<string, Buffer>): void {
  const after = snapshot();
  expect([...after.keys()].sort()).toEqual([...before.keys()].sort());
  for (const [name, bytes] of before) {
    const now = after.get(name) as Buffer;
    const changed = [...bytes.keys()].filter((i) => bytes[i] !== now[i]);
    expect({ name, length: now.length, changed }).toEqual({
      name,
      length: bytes.length,
      changed: [],
    });
  }
  for (const suffix of ["-wal", "-shm", "-journal"])
    expect(existsSync(`${path}${suffix}`)).toBe(false);
}

function journalMode(file: string): string {
  const db = new Database(file, { readonly: true });
  try {
    return String(db.pragma("journal_mode", { simple: true }));
  } finally {
    db.close();
  }
}

/** Foreign SQLite files, each made by a plain connection the way another program would. */
const FOREIGN: [string, string, RegExp][] = [
  [
    "one table of its own (people)",
    "CREATE TABLE people (name TEXT); INSERT INTO people VALUES ('ann')",
    /not a Durably SQLite storage: it has tables \(people\) but no migrations table/,
  ],
  [
    "a migrations table of another framework's shape",
    "CREATE TABLE migrations (id INTEGER PRIMARY KEY, migration TEXT, batch INTEGER); INSERT INTO migrations VALUES (1, 'create_users', 1)",
    /its migrations table has columns \(id, migration, batch\), not Durably's \(version, applied_at\)/,
  ],
  [
    "a migrations table shaped like Durably's but empty",
    "CREATE TABLE migrations (version INTEGER PRIMARY KEY, applied_at TEXT NOT NULL)",
    /its migrations table is empty/,
  ],
  [
    "a migrations table shaped like Durably's with versions Durably never writes",
    "CREATE TABLE migrations (version INTEGER PRIMARY KEY, applied_at TEXT NOT NULL); INSERT INTO migrations VALUES (2, 'x'), (3, 'y')",
    /does not hold the versions Durably writes .*lowest 2, highest 3/,
  ],
  [
    "only a view",
    "CREATE VIEW answer AS SELECT 42",
    /schema objects \(view answer\) but no tables/,
  ],
  [
    "no tables but a user_version set",
    "PRAGMA user_version = 7",
    /no tables, but its header carries application_id 0 and user_version 7/,
  ],
];

describe("a refused open leaves someone else's SQLite file byte for byte as it was", () => {
  it.each(FOREIGN)(
    "a rollback-journal file with %s: StorageCorrupted naming the file; same bytes, no -wal/-shm/-journal, still in journal mode delete",
    async (_label, sql, message) => {
      editDatabase(path, sql);
      expect(journalMode(path)).toBe("delete");
      const before = snapshot();
      const error = await openFailure(path);
      expect(error).toBeInstanceOf(StorageCorrupted);
      expect((error as Error).message).toContain(path);
      expect((error as Error).message).toMatch(message);
      expect((error as StorageCorrupted).location).toMatchObject({ file: path });
      expectUnchanged(before);
      expect(journalMode(path)).toBe("delete");
    },
  );

  it("a foreign file already in WAL mode: StorageCorrupted, same bytes, no -wal or -shm left", async () => {
    const db = new Database(path);
    db.pragma("journal_mode = WAL");
    db.exec("CREATE TABLE people (name TEXT); INSERT INTO people VALUES ('ann')");
    db.close();
    const before = snapshot();
    const error = await openFailure(path);
    expect(error).toBeInstanceOf(StorageCorrupted);
    expect((error as Error).message).toMatch(
      /not a Durably SQLite storage: it has tables \(people\)/,
    );
    expectUnchanged(before);
  });

  it("a Durably file of a newer schema: StorageVersionError, same bytes, no -wal or -shm left", async () => {
    const storage = await openSqliteStorage(path);
    await commitRoot(storage);
    await storage.close();
    editDatabase(
      path,
      `INSERT INTO migrations (version, applied_at) VALUES (${SCHEMA_VERSION + 1}, 'later')`,
    );
    const before = snapshot();
    const error = await openFailure(path);
    expect(error).toBeInstanceOf(StorageVersionError);
    expectUnchanged(before);
  });

  it("the refused file is released: a plain connection writes to it at once, and it still is not taken over", async () => {
    editDatabase(path, "CREATE TABLE people (name TEXT)");
    await openFailure(path);
    editDatabase(path, "INSERT INTO people VALUES ('bob')");
    expect(await openFailure(path)).toBeInstanceOf(StorageCorrupted);
  });
});

describe("the ownership decision holds the file's exclusive lock", () => {
  it("opens of one new file racing in this process: exactly one opens, the others fail with StorageLocked", async () => {
    const results = await Promise.allSettled([
      openSqliteStorage(path),
      openSqliteStorage(path),
      openSqliteStorage(path),
    ]);
    const opened = results.filter((r) => r.status === "fulfilled");
    const refused = results.filter((r) => r.status === "rejected");
    expect(opened).toHaveLength(1);
    for (const r of refused) expect(r.reason).toBeInstanceOf(StorageLocked);
    const [winner] = opened;
    if (winner?.status === "fulfilled") {
      await commitRoot(winner.value);
      await winner.value.close();
    }
    // The file the winner made is a Durably file in WAL mode, and opens again.
    expect(journalMode(path)).toBe("wal");
    const again = await openSqliteStorage(path);
    await again.close();
  });

  it("an empty file (0 bytes) is taken over: it becomes a Durably file in WAL mode", async () => {
    writeFileSync(path, "");
    const storage = await openSqliteStorage(path);
    await commitRoot(storage);
    await storage.close();
    expect(readdirSync(dir.dir)).toEqual(["app.sqlite"]);
    expect(readFileSync(path).subarray(18, 20)).toEqual(Buffer.from([2, 2]));
  });
});
