import { StorageCorrupted } from "@durably/core";
import { rowCrc } from "./checksums.js";
import { v3ColumnText as columnText } from "./legacy-checksums.js";
import type { SqliteStatements, SqlValue } from "./sqlite-database.js";

/** A revision row as schema version 3 stores it. */
interface StoredRevision {
  document_id: number;
  seq: number;
  kind: string;
  content: string;
  version: number;
}

/** A document row as schema version 3 stores it, without its checksums. */
interface StoredDocument {
  id: number;
  rewindable: number;
  created_at: number;
  retired_at: number | null;
  version: number;
  base_seq: number;
  record: string;
}

/** Rows read per statement while backfilling, so a large file never sits in memory at once. */
const PAGE = 512;

/**
 * Computes the checksums (and the entries' head flags) of every row a file
 * written before schema version 3 holds, inside the migration's transaction:
 * either every row gets its checksum or the file stays at its old version.
 * Each record is parsed first, so a row that is already broken is reported
 * (`StorageCorrupted`, table and key) rather than sealed with a checksum
 * that would vouch for it.
 */
export function backfillChecksums(db: SqliteStatements, location: string): void {
  // `key` as the read path names it: the id, or `document_id/seq` for a revision.
  const parse = (table: string, key: string, text: string, shape: "object" | "any" | "array") => {
    const row = table === "document_revisions" ? `document_id/seq ${key}` : `id ${key}`;
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (error) {
      throw new StorageCorrupted(
        `${location}: ${table} ${row}: the stored JSON does not parse, so it cannot be given a checksum`,
        { file: location, table, key },
        { cause: error },
      );
    }
    const ok =
      shape === "any" ||
      (shape === "array"
        ? Array.isArray(value)
        : typeof value === "object" && value !== null && !Array.isArray(value));
    if (!ok)
      throw new StorageCorrupted(
        `${location}: ${table} ${row}: the stored JSON is not ${shape === "array" ? "an ops array" : "a record object"}`,
        { file: location, table, key },
      );
    return value as Record<string, unknown>;
  };

  // Conversations, tasks and submissions: the checksum covers the record and the id.
  for (const table of ["conversations", "tasks", "submissions"] as const) {
    const text = {
      conversations: columnText.conversation,
      tasks: columnText.task,
      submissions: columnText.submission,
    }[table];
    byId<{ id: number; record: string }>(db, table, "id, record", (r) => {
      parse(table, String(r.id), r.record, "object");
      return [`UPDATE ${table} SET crc = ? WHERE id = ?`, [rowCrc(r.record, text(r.id)), r.id]];
    });
  }
  byId<{ id: number; commit_seq: number; record: string }>(
    db,
    "entries",
    "id, commit_seq, record",
    (r) => {
      const record = parse("entries", String(r.id), r.record, "object");
      const head = record.head !== undefined && record.head !== null ? 1 : 0;
      const crc = rowCrc(r.record, columnText.entry(r.id, r.commit_seq));
      return ["UPDATE entries SET head = ?, crc = ? WHERE id = ?", [head, crc, r.id]];
    },
  );
  byId<StoredDocument>(
    db,
    "documents",
    "id, rewindable, created_at, retired_at, version, base_seq, record",
    (r) => {
      parse("documents", String(r.id), r.record, "object");
      const fixed = columnText.document(r.id, r.rewindable, r.created_at);
      const state = columnText.documentState(r.id, r.version, r.base_seq, r.retired_at);
      return [
        "UPDATE documents SET crc = ?, state_crc = ? WHERE id = ?",
        [rowCrc(r.record, fixed), rowCrc("", state), r.id],
      ];
    },
  );
  backfillRevisions(db, (r) =>
    parse(
      "document_revisions",
      `${r.document_id}/${r.seq}`,
      r.content,
      r.kind === "delta" ? "array" : "any",
    ),
  );
  for (const r of db.all<{ name: string; value: number }>("SELECT name, value FROM metadata"))
    db.run("UPDATE metadata SET crc = ? WHERE name = ?", [
      rowCrc("", columnText.counter(r.name, r.value)),
      r.name,
    ]);
  for (const r of db.all<{ namespace: string; high_water: number }>(
    "SELECT namespace, high_water FROM ids",
  ))
    db.run("UPDATE ids SET crc = ? WHERE namespace = ?", [
      rowCrc("", columnText.counter(r.namespace, r.high_water)),
      r.namespace,
    ]);
}

/** Walks a rowid table in id order, a page at a time, running the update each row asks for. */
function byId<Row extends { id: number }>(
  db: SqliteStatements,
  table: string,
  columns: string,
  update: (row: Row) => [string, SqlValue[]],
): void {
  const select = `SELECT ${columns} FROM ${table} WHERE id > ? ORDER BY id LIMIT ${PAGE}`;
  let after = Number.MIN_SAFE_INTEGER;
  for (;;) {
    const rows = db.all<Row>(select, [after]);
    for (const row of rows) {
      const [sql, params] = update(row);
      db.run(sql, params);
    }
    const last = rows[rows.length - 1];
    if (last === undefined || rows.length < PAGE) return;
    after = last.id;
  }
}

function backfillRevisions(db: SqliteStatements, check: (row: StoredRevision) => void): void {
  const select = `SELECT document_id, seq, kind, content, version FROM document_revisions
    WHERE (document_id, seq) > (?, ?) ORDER BY document_id, seq LIMIT ${PAGE}`;
  let after: [number, number] = [Number.MIN_SAFE_INTEGER, Number.MIN_SAFE_INTEGER];
  for (;;) {
    const rows = db.all<StoredRevision>(select, after);
    for (const r of rows) {
      check(r);
      db.run("UPDATE document_revisions SET crc = ? WHERE document_id = ? AND seq = ?", [
        rowCrc(r.content, columnText.revision(r.document_id, r.seq, r.kind, r.version)),
        r.document_id,
        r.seq,
      ]);
    }
    const last = rows[rows.length - 1];
    if (last === undefined || rows.length < PAGE) return;
    after = [last.document_id, last.seq];
  }
}
