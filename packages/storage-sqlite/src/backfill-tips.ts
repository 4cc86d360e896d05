import { StorageCorrupted } from "@durably/core";
import { columnText, rowCrc, rowMatches } from "./checksums.js";
import { v4ColumnText } from "./legacy-checksums.js";
import type { SqliteStatements } from "./sqlite-database.js";

/** Rows read per statement while moving, so a large file never sits in memory at once. */
const PAGE = 512;

const ENTRY_TIPS_AFTER = `SELECT conversation_id, last_id, last_head, crc FROM entry_tips
  WHERE conversation_id > ? ORDER BY conversation_id LIMIT ${PAGE}`;
const DOCUMENTS_AFTER = `SELECT id, version, base_seq, retired_at, last_seq, state_crc FROM documents
  WHERE id > ? ORDER BY id LIMIT ${PAGE}`;
const INSERT_TIP = "INSERT INTO tips (id, chain, newest, newest_head, crc) VALUES (?, ?, ?, ?, ?)";
const RESEAL_STATE = "UPDATE documents SET state_crc = ? WHERE id = ?";

interface StoredEntryTip {
  conversation_id: number;
  last_id: number;
  last_head: number;
  crc: number;
}

interface StoredDocumentState {
  id: number;
  version: number;
  base_seq: number;
  retired_at: number | null;
  last_seq: number;
  state_crc: number;
}

/**
 * Moves the ends of the chains of a schema-version-4 file into `tips`
 * (migration 5), inside the migration's transaction: each conversation's
 * `entry_tips` row, each document's `last_seq` and the `next_seq` counter of
 * `metadata` become rows of one small table, so a commit rewrites one
 * b-tree page for them where it rewrote three. Every row's version-4
 * checksum is verified before it is moved (a damaged row is reported,
 * `StorageCorrupted` naming table and key, and the file stays at version 4),
 * then the old places are dropped: `entry_tips`, `metadata` and the
 * `documents.last_seq` column, and each document's state checksum is
 * resealed without it.
 */
export function backfillTips(db: SqliteStatements, location: string): void {
  const damaged = (table: string, key: string, what = "the row") =>
    new StorageCorrupted(
      `${location}: ${table} ${table === "entry_tips" ? "conversation_id" : table === "metadata" ? "name" : "id"} ${key}: ${what} does not match its stored checksum, so it cannot be moved into tips`,
      { file: location, table, key },
    );
  moveEntryTips(db, damaged);
  moveNewestRevisions(db, damaged);
  moveSeqCounter(db, damaged, location);
  db.run("DROP TABLE entry_tips");
  db.run("DROP TABLE metadata");
  db.run("ALTER TABLE documents DROP COLUMN last_seq");
}

type Damaged = (table: string, key: string, what?: string) => StorageCorrupted;

function moveEntryTips(db: SqliteStatements, damaged: Damaged): void {
  let after = Number.MIN_SAFE_INTEGER;
  for (;;) {
    const rows = db.all<StoredEntryTip>(ENTRY_TIPS_AFTER, [after]);
    for (const r of rows) {
      const v4 = v4ColumnText.tip(r.conversation_id, r.last_id, r.last_head);
      if (!rowMatches(r.crc, "", v4)) throw damaged("entry_tips", String(r.conversation_id));
      const crc = rowCrc("", columnText.tip(r.conversation_id, "entries", r.last_id, r.last_head));
      db.run(INSERT_TIP, [r.conversation_id, "entries", r.last_id, r.last_head, crc]);
    }
    const last = rows[rows.length - 1];
    if (last === undefined || rows.length < PAGE) return;
    after = last.conversation_id;
  }
}

function moveNewestRevisions(db: SqliteStatements, damaged: Damaged): void {
  let after = Number.MIN_SAFE_INTEGER;
  for (;;) {
    const rows = db.all<StoredDocumentState>(DOCUMENTS_AFTER, [after]);
    for (const r of rows) {
      const v4 = v4ColumnText.documentState(r.id, r.version, r.base_seq, r.retired_at, r.last_seq);
      if (!rowMatches(r.state_crc, "", v4))
        throw damaged(
          "documents",
          String(r.id),
          "its version, base, newest revision and retirement columns",
        );
      const tip = rowCrc("", columnText.tip(r.id, "revisions", r.last_seq, 0));
      db.run(INSERT_TIP, [r.id, "revisions", r.last_seq, 0, tip]);
      const state = columnText.documentState(r.id, r.version, r.base_seq, r.retired_at);
      db.run(RESEAL_STATE, [rowCrc("", state), r.id]);
    }
    const last = rows[rows.length - 1];
    if (last === undefined || rows.length < PAGE) return;
    after = last.id;
  }
}

function moveSeqCounter(db: SqliteStatements, damaged: Damaged, location: string): void {
  const row = db.get<{ value: number; crc: number }>(
    "SELECT value, crc FROM metadata WHERE name = 'next_seq'",
  );
  if (row === undefined || !Number.isSafeInteger(row.value) || row.value < 1)
    throw new StorageCorrupted(`${location}: table metadata has no valid next_seq row`, {
      file: location,
      table: "metadata",
    });
  if (!rowMatches(row.crc, "", v4ColumnText.counter("next_seq", row.value)))
    throw damaged("metadata", "next_seq");
  db.run(INSERT_TIP, [0, "seq", row.value, 0, rowCrc("", columnText.tip(0, "seq", row.value, 0))]);
}
