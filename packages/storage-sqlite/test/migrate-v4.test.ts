import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { StorageCorrupted, type EntryId } from "@durably/core";
import { openSqliteStorage, SCHEMA_VERSION } from "../src/index.js";
import { LEGACY_COMMITS } from "./support/legacy-file.js";
import { useLegacyFixture, withRaw } from "./support/legacy-fixture.js";
import { CURRENT_ONLY, REWINDABLE, ROOT, verifyLedger } from "./support/ledger.js";

/** Written by the release before `tips` (schema version 4); see test/fixtures/README.md. */
const fixture = useLegacyFixture("v4-main.sqlite");

interface V4Ends {
  entryTips: { conversation_id: number; last_id: number; last_head: number }[];
  lastSeqs: { id: number; last_seq: number }[];
  nextSeq: number;
}

function v4Ends(path: string): V4Ends {
  return withRaw(path, (db) => ({
    entryTips: db
      .prepare(
        "SELECT conversation_id, last_id, last_head FROM entry_tips ORDER BY conversation_id",
      )
      .all() as V4Ends["entryTips"],
    lastSeqs: db
      .prepare("SELECT id, last_seq FROM documents ORDER BY id")
      .all() as V4Ends["lastSeqs"],
    nextSeq: (
      db.prepare("SELECT value FROM metadata WHERE name = 'next_seq'").get() as { value: number }
    ).value,
  }));
}

describe("a schema-version-4 file written by the previous release", () => {
  it("is a version-4 file with entry_tips, metadata and documents.last_seq, as that release wrote it", () => {
    const ends = v4Ends(fixture.path);
    expect(
      withRaw(fixture.path, (db) => db.prepare("SELECT max(version) AS v FROM migrations").get()),
    ).toEqual({ v: 4 });
    expect(ends.entryTips.map((t) => t.conversation_id)).toEqual([ROOT, 2]);
    expect(ends.lastSeqs.map((d) => d.id)).toEqual([REWINDABLE, CURRENT_ONLY]);
    expect(ends.nextSeq).toBe(LEGACY_COMMITS + 1);
  });

  it("opens at version 5 with every chain end moved into tips, and reads back exactly what it held", async () => {
    const path = fixture.copy();
    const before = v4Ends(path);
    const storage = await openSqliteStorage(path);
    expect(await verifyLedger(storage, fixture.ledger)).toEqual([]);
    await storage.close();
    withRaw(path, (db) => {
      expect(db.prepare("SELECT max(version) AS v FROM migrations").get()).toEqual({
        v: SCHEMA_VERSION,
      });
      const tables = (
        db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all() as {
          name: string;
        }[]
      ).map((t) => t.name);
      expect(tables).toContain("tips");
      expect(tables).not.toContain("entry_tips");
      expect(tables).not.toContain("metadata");
      const tips = db
        .prepare("SELECT id, chain, newest, newest_head FROM tips ORDER BY id, chain")
        .all();
      expect(tips).toEqual(
        [
          { id: 0, chain: "seq", newest: before.nextSeq, newest_head: 0 },
          ...before.entryTips.map((t) => ({
            id: t.conversation_id,
            chain: "entries",
            newest: t.last_id,
            newest_head: t.last_head,
          })),
          ...before.lastSeqs.map((d) => ({
            id: d.id,
            chain: "revisions",
            newest: d.last_seq,
            newest_head: 0,
          })),
        ].sort((a, b) => a.id - b.id || a.chain.localeCompare(b.chain)),
      );
    });
  });

  it("keeps taking commits after the migration: seqs continue, and a lost revision is still caught", async () => {
    const path = fixture.copy();
    let storage = await openSqliteStorage(path);
    const id = (1000 + 2 * LEGACY_COMMITS) as EntryId;
    let seq = 0;
    await storage.commit(
      [
        [
          { type: "entry", value: { id, conversationId: ROOT, kind: "note", data: "after" } },
          {
            type: "document.change",
            id: REWINDABLE,
            content: { kind: "delta", version: 1, ops: [["s", ["after"], true]] },
          },
        ],
      ],
      (_, s) => (seq = s),
    );
    expect(seq).toBe(LEGACY_COMMITS + 1);
    await storage.close();
    storage = await openSqliteStorage(path);
    expect((await storage.entry(id))?.entry.data).toBe("after");
    expect((await storage.document(REWINDABLE, "current"))?.value).toMatchObject({ after: true });
    await storage.close();
    // The newest revision, written after the migration, lost: the document's tip still names it.
    withRaw(path, (db) =>
      db
        .prepare("DELETE FROM document_revisions WHERE document_id = ? AND seq = ?")
        .run(REWINDABLE, seq),
    );
    storage = await openSqliteStorage(path, { openCheck: "none" });
    const error = await storage.document(REWINDABLE, "current").catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StorageCorrupted);
    expect((error as StorageCorrupted).location).toMatchObject({
      table: "document_revisions",
      key: `${REWINDABLE}/${seq}`,
    });
    await storage.close();
  });

  it.each([
    ["entry_tips", "UPDATE entry_tips SET last_id = last_id - 2 WHERE conversation_id = 1", "1"],
    [
      "documents",
      `UPDATE documents SET last_seq = last_seq - 1 WHERE id = ${REWINDABLE}`,
      `${REWINDABLE}`,
    ],
    ["metadata", "UPDATE metadata SET value = 3 WHERE name = 'next_seq'", "next_seq"],
  ])(
    "a %s row damaged before the upgrade is refused with StorageCorrupted naming it, and the file stays at version 4, byte for byte",
    async (table, edit, key) => {
      const path = fixture.copy();
      withRaw(path, (db) => db.prepare(edit).run());
      const bytes = readFileSync(path);
      const error = await openSqliteStorage(path).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(StorageCorrupted);
      expect((error as StorageCorrupted).location).toMatchObject({ file: path, table, key });
      expect(readFileSync(path).equals(bytes)).toBe(true);
      withRaw(path, (db) =>
        expect(db.prepare("SELECT max(version) AS v FROM migrations").get()).toEqual({ v: 4 }),
      );
    },
  );
});
