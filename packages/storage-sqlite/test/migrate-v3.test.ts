import { copyFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { StorageCorrupted, type EntryId } from "@durably/core";
import { openSqliteStorage, SCHEMA_VERSION } from "../src/index.js";
import { tempDir } from "./helpers.js";
import { LEGACY_COMMITS, LEGACY_FORK_AT } from "./support/legacy-file.js";
import { REWINDABLE, ROOT, verifyLedger, writeLedger, type Ledger } from "./support/ledger.js";

/** Written by the release before the chains (schema version 3); see test/fixtures/README.md. */
const FIXTURE = fileURLToPath(new URL("./fixtures/v3-main.sqlite", import.meta.url));

let dir: ReturnType<typeof tempDir>;
let ledger: Ledger;
let n = 0;

beforeAll(async () => {
  dir = tempDir("durably-sqlite-v3-");
  // The workload is deterministic (fixed ids, seqs from 1): writing it again gives what the fixture holds.
  const scratch = await openSqliteStorage(join(dir.dir, "scratch.sqlite"));
  ledger = await writeLedger(scratch, LEGACY_COMMITS, LEGACY_FORK_AT);
  await scratch.close();
});
afterAll(() => dir.cleanup());

function copy(): string {
  const path = join(dir.dir, `v3-${n++}.sqlite`);
  copyFileSync(FIXTURE, path);
  return path;
}

function raw<T>(path: string, read: (db: Database.Database) => T): T {
  const db = new Database(path);
  try {
    return read(db);
  } finally {
    db.close();
  }
}

describe("a schema-version-3 file written by the previous release", () => {
  it("is a version-3 file without chains, as that release wrote it", () => {
    raw(FIXTURE, (db) => {
      expect(db.prepare("SELECT max(version) AS v FROM migrations").get()).toEqual({ v: 3 });
      const columns = (db.prepare("PRAGMA table_info(entries)").all() as { name: string }[]).map(
        (c) => c.name,
      );
      expect(columns).not.toContain("prev");
    });
  });

  it("opens at the current version and reads back exactly what it held, with every entry and revision linked", async () => {
    const path = copy();
    const storage = await openSqliteStorage(path);
    expect(await verifyLedger(storage, ledger)).toEqual([]);
    await storage.close();
    raw(path, (db) => {
      expect(db.prepare("SELECT max(version) AS v FROM migrations").get()).toEqual({
        v: SCHEMA_VERSION,
      });
      // Each entry links to the one before it in its conversation; the tips name the newest.
      const entries = db
        .prepare("SELECT id, prev FROM entries WHERE conversation_id = ? ORDER BY id")
        .all(ROOT) as { id: number; prev: number }[];
      expect(entries.length).toBe(LEGACY_COMMITS);
      entries.forEach((e, i) => expect(e.prev, `entry ${e.id}`).toBe(entries[i - 1]?.id ?? 0));
      expect(
        db.prepare("SELECT newest FROM tips WHERE id = ? AND chain = 'entries'").get(ROOT),
      ).toEqual({ newest: entries[entries.length - 1]?.id });
      const revisions = db
        .prepare("SELECT seq, prev_seq FROM document_revisions WHERE document_id = ? ORDER BY seq")
        .all(REWINDABLE) as { seq: number; prev_seq: number }[];
      revisions.forEach((r, i) =>
        expect(r.prev_seq, `seq ${r.seq}`).toBe(revisions[i - 1]?.seq ?? 0),
      );
    });
  });

  it("keeps taking commits after the migration, and they read back", async () => {
    const path = copy();
    let storage = await openSqliteStorage(path);
    const id = (1000 + 2 * LEGACY_COMMITS) as EntryId;
    await storage.commit(
      [[{ type: "entry", value: { id, conversationId: ROOT, kind: "note", data: "after" } }]],
      () => {},
    );
    await storage.close();
    storage = await openSqliteStorage(path);
    expect((await storage.entry(id))?.entry.data).toBe("after");
    const page = await storage.scanEntries({ conversationId: ROOT, order: "descending" }, 2);
    expect(page.items.map((e) => e.id)).toEqual([id, id - 2]);
    await storage.close();
  });

  it("an entry lost after the migration fails the scans that cross it with StorageCorrupted naming it", async () => {
    const path = copy();
    await (await openSqliteStorage(path)).close();
    raw(path, (db) => db.prepare("DELETE FROM entries WHERE id = 1100").run());
    const storage = await openSqliteStorage(path);
    const error = await storage
      .scanEntries({ conversationId: ROOT }, 1000)
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StorageCorrupted);
    expect((error as StorageCorrupted).location).toMatchObject({ table: "entries", key: "1100" });
    await storage.close();
  });

  it("a version-3 file with a row already gone before the migration is sealed as it is found: the migration cannot tell", async () => {
    // What the chains cannot do: a row lost before they existed leaves no link pointing at it.
    const path = copy();
    raw(path, (db) => db.prepare("DELETE FROM entries WHERE id = 1100").run());
    const storage = await openSqliteStorage(path);
    const ids = (await storage.scanEntries({ conversationId: ROOT }, 1000)).items.map((e) => e.id);
    expect(ids).not.toContain(1100);
    expect(ids.length).toBe(LEGACY_COMMITS - 1);
    await storage.close();
  });
});
