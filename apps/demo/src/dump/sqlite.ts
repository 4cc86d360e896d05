import { BetterSqlite3Database, ENTRY_ROWS_SQL, REVISION_ROWS_SQL } from "@durably/storage-sqlite";
import type { Section } from "./section.js";

export interface EntryRow {
  id: number;
  conversation_id: number;
  commit_seq: number;
  data: string | number | null;
}

export interface RevisionRow {
  document_id: number;
  seq: number;
  kind: string;
  content: string;
}

export interface SqliteDump {
  sections: Section[];
  entries: EntryRow[];
  revisions: RevisionRow[];
}

const cell = (value: string | number | null): string => (value === null ? "NULL" : String(value));

/** The entries rows as a section: the same columns whichever SQL database they were read from. */
export function entryRowsSection(title: string, entries: readonly EntryRow[]): Section {
  return {
    title,
    table: {
      columns: [
        { header: "id", align: "right" },
        { header: "conversation_id", align: "right" },
        { header: "commit_seq", align: "right" },
        { header: "data" },
      ],
      rows: entries.map((r) => [
        cell(r.id),
        cell(r.conversation_id),
        cell(r.commit_seq),
        cell(r.data),
      ]),
    },
  };
}

/** The document_revisions rows as a section. */
export function revisionRowsSection(title: string, revisions: readonly RevisionRow[]): Section {
  return {
    title,
    table: {
      columns: [
        { header: "document_id", align: "right" },
        { header: "seq", align: "right" },
        { header: "kind" },
        { header: "content" },
      ],
      rows: revisions.map((r) => [cell(r.document_id), cell(r.seq), r.kind, r.content]),
    },
  };
}

/** The rows of the two queries the SQLite package exports for inspection, read straight from the file. */
export async function dumpSqlite(file: string): Promise<SqliteDump> {
  const db = BetterSqlite3Database.open(file);
  try {
    const entries = await db.all<EntryRow>(ENTRY_ROWS_SQL);
    const revisions = await db.all<RevisionRow>(REVISION_ROWS_SQL);
    return {
      entries,
      revisions,
      sections: [
        entryRowsSection(ENTRY_ROWS_SQL, entries),
        revisionRowsSection(REVISION_ROWS_SQL, revisions),
      ],
    };
  } finally {
    await db.close();
  }
}
