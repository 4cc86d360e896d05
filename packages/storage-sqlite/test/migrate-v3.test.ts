import { describe, expect, it } from "vitest";
import { StorageCorrupted, type EntryId } from "@durably/core";
import { openSqliteStorage, SCHEMA_VERSION } from "../src/index.js";
import { LEGACY_COMMITS } from "./support/legacy-file.js";
import { useLegacyFixture, withRaw } from "./support/legacy-fixture.js";
import { REWINDABLE, ROOT, verifyLedger } from "./support/ledger.js";

/** Written by the release before the chains (schema version 3); see test/fixtures/README.md. */
const fixture = useLegacyFixture("v3-main.sqlite");

describe("a schema-version-3 file written by the previous release", () => {
  it("is a version-3 file without chains, as that release wrote it", () => {
    withRaw(fixture.path, (db) => {
      expect(db.prepare("SELECT max(version) AS v FROM migrations").get()).toEqual({ v: 3 });
      const columns = (db.prepare("PRAGMA table_info(entries)").all() as { name: string }[]).map(
        (c) => c.name,
      );
      expect(columns).not.toContain("prev");
    });
  });

  it("opens at the current version and reads back exactly what it held, with every entry and revision linked", async () => {
    const path = fixture.copy();
    const storage = await openSqliteStorage(path);
    expect(await verifyLedger(storage, fixture.ledger)).toEqual([]);
    await storage.close();
    withRaw(path, (db) => {
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
    const path = fixture.copy();
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
    const path = fixture.copy();
    await (await openSqliteStorage(path)).close();
    withRaw(path, (db) => db.prepare("DELETE FROM entries WHERE id = 1100").run());
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
    const path = fixture.copy();
    withRaw(path, (db) => db.prepare("DELETE FROM entries WHERE id = 1100").run());
    const storage = await openSqliteStorage(path);
    const ids = (await storage.scanEntries({ conversationId: ROOT }, 1000)).items.map((e) => e.id);
    expect(ids).not.toContain(1100);
    expect(ids.length).toBe(LEGACY_COMMITS - 1);
    await storage.close();
  });
});
