import { StorageCorrupted } from "@durably/core";
import { columnText, rowCrc, rowMatches } from "./checksums.js";
import { v3ColumnText, v4ColumnText } from "./legacy-checksums.js";
import type { SqliteStatements } from "./sqlite-database.js";

/** Rows read per statement while backfilling, so a large file never sits in memory at once. */
const PAGE = 512;

const ENTRIES_AFTER = `SELECT id, conversation_id, commit_seq, head, record, crc FROM entries
  WHERE (conversation_id, id) > (?, ?) ORDER BY conversation_id, id LIMIT ${PAGE}`;
const LINK_ENTRY = "UPDATE entries SET prev = ?, prev_head = ?, crc = ? WHERE id = ?";
const INSERT_TIP =
  "INSERT INTO entry_tips (conversation_id, last_id, last_head, crc) VALUES (?, ?, ?, ?)";
const REVISIONS_AFTER = `SELECT document_id, seq, kind, content, version, crc FROM document_revisions
  WHERE (document_id, seq) > (?, ?) ORDER BY document_id, seq LIMIT ${PAGE}`;
const LINK_REVISION =
  "UPDATE document_revisions SET prev_seq = ?, crc = ? WHERE document_id = ? AND seq = ?";
const DOCUMENTS_AFTER = `SELECT id, version, base_seq, retired_at, state_crc FROM documents
  WHERE id > ? ORDER BY id LIMIT ${PAGE}`;
const NEWEST_REVISION =
  "SELECT seq FROM document_revisions WHERE document_id = ? ORDER BY seq DESC LIMIT 1";
const SET_LAST_SEQ = "UPDATE documents SET last_seq = ?, state_crc = ? WHERE id = ?";

interface StoredEntry {
  id: number;
  conversation_id: number;
  commit_seq: number;
  head: number;
  record: string;
  crc: number;
}

interface StoredRevision {
  document_id: number;
  seq: number;
  kind: string;
  content: string;
  version: number;
  crc: number;
}

interface StoredDocumentState {
  id: number;
  version: number;
  base_seq: number;
  retired_at: number | null;
  state_crc: number;
}

/**
 * Links the rows of a schema-version-3 file into the chains of version 4,
 * inside the migration's transaction: each entry learns the entry (and, for
 * a head, the head) before it in its conversation, each conversation gets
 * its tip row, each revision learns the seq of the revision before it, and
 * each document the seq of its newest revision. Every row's version-3
 * checksum is verified before it is resealed, so a row damaged before the
 * upgrade is reported (`StorageCorrupted`, table and key) instead of being
 * vouched for. The ends of the chains are sealed in the version-4 layout
 * (`entry_tips`, `documents.last_seq`), which migration 5 then moves to `tips`. Open runs SQLite's structural check before any migration, so
 * the rows walked here are all the rows the file holds.
 */
export function backfillChains(db: SqliteStatements, location: string): void {
  const damaged = (table: string, key: string) =>
    new StorageCorrupted(
      `${location}: ${table} ${table === "document_revisions" ? "document_id/seq" : "id"} ${key}: the row does not match its stored checksum, so it cannot be linked into the version-4 chains`,
      { file: location, table, key },
    );
  linkEntries(db, damaged);
  linkRevisions(db, damaged);
  stampNewestRevisions(db, damaged);
}

function linkEntries(
  db: SqliteStatements,
  damaged: (table: string, key: string) => StorageCorrupted,
): void {
  let conversation = 0;
  let lastId = 0;
  let lastHead = 0;
  const closeTip = () => {
    if (conversation === 0) return;
    const crc = rowCrc("", v4ColumnText.tip(conversation, lastId, lastHead));
    db.run(INSERT_TIP, [conversation, lastId, lastHead, crc]);
  };
  let after: [number, number] = [Number.MIN_SAFE_INTEGER, Number.MIN_SAFE_INTEGER];
  for (;;) {
    const rows = db.all<StoredEntry>(ENTRIES_AFTER, after);
    for (const r of rows) {
      if (!rowMatches(r.crc, r.record, v3ColumnText.entry(r.id, r.commit_seq)))
        throw damaged("entries", String(r.id));
      if (r.conversation_id !== conversation) {
        closeTip();
        conversation = r.conversation_id;
        lastId = 0;
        lastHead = 0;
      }
      const prevHead = r.head === 1 ? lastHead : 0;
      const crc = rowCrc(r.record, columnText.entry(r.id, r.commit_seq, lastId, prevHead));
      db.run(LINK_ENTRY, [lastId, prevHead, crc, r.id]);
      lastId = r.id;
      if (r.head === 1) lastHead = r.id;
    }
    const last = rows[rows.length - 1];
    if (last === undefined || rows.length < PAGE) break;
    after = [last.conversation_id, last.id];
  }
  closeTip();
}

function linkRevisions(
  db: SqliteStatements,
  damaged: (table: string, key: string) => StorageCorrupted,
): void {
  let document = Number.MIN_SAFE_INTEGER;
  let prevSeq = 0;
  let after: [number, number] = [Number.MIN_SAFE_INTEGER, Number.MIN_SAFE_INTEGER];
  for (;;) {
    const rows = db.all<StoredRevision>(REVISIONS_AFTER, after);
    for (const r of rows) {
      if (
        !rowMatches(
          r.crc,
          r.content,
          v3ColumnText.revision(r.document_id, r.seq, r.kind, r.version),
        )
      )
        throw damaged("document_revisions", `${r.document_id}/${r.seq}`);
      if (r.document_id !== document) {
        document = r.document_id;
        prevSeq = 0;
      }
      const columns = columnText.revision(r.document_id, r.seq, r.kind, r.version, prevSeq);
      db.run(LINK_REVISION, [prevSeq, rowCrc(r.content, columns), r.document_id, r.seq]);
      prevSeq = r.seq;
    }
    const last = rows[rows.length - 1];
    if (last === undefined || rows.length < PAGE) return;
    after = [last.document_id, last.seq];
  }
}

function stampNewestRevisions(
  db: SqliteStatements,
  damaged: (table: string, key: string) => StorageCorrupted,
): void {
  let after = Number.MIN_SAFE_INTEGER;
  for (;;) {
    const rows = db.all<StoredDocumentState>(DOCUMENTS_AFTER, [after]);
    for (const r of rows) {
      const v3 = v3ColumnText.documentState(r.id, r.version, r.base_seq, r.retired_at);
      if (!rowMatches(r.state_crc, "", v3)) throw damaged("documents", String(r.id));
      // A retired current-only document has no revisions left: its base stands for the newest.
      const lastSeq = db.get<{ seq: number }>(NEWEST_REVISION, [r.id])?.seq ?? r.base_seq;
      const state = v4ColumnText.documentState(r.id, r.version, r.base_seq, r.retired_at, lastSeq);
      db.run(SET_LAST_SEQ, [lastSeq, rowCrc("", state), r.id]);
    }
    const last = rows[rows.length - 1];
    if (last === undefined || rows.length < PAGE) return;
    after = last.id;
  }
}
