import pg from "pg";
import { PG_SCHEMA } from "../postgres-config.js";
import type { Section } from "./section.js";
import {
  entryRowsSection,
  revisionRowsSection,
  type EntryRow,
  type RevisionRow,
  type SqliteDump,
} from "./sqlite.js";

export type PostgresDump = SqliteDump;

/** The entries of one session, as SQLite's ENTRY_ROWS_SQL shows them: `data` is the record's data as text. */
export const PG_ENTRY_ROWS_SQL = `SELECT id, conversation_id, commit_seq, record::json ->> 'data' AS data FROM ${PG_SCHEMA}.entries WHERE session_key = $1 ORDER BY id`;
/** The document revisions of one session, base and deltas, in seq order. */
export const PG_REVISION_ROWS_SQL = `SELECT document_id, seq, kind, content FROM ${PG_SCHEMA}.document_revisions WHERE session_key = $1 ORDER BY document_id, seq`;

/** Ids and seqs are bigint columns, which pg returns as strings; these queries read them as numbers. */
const INT8_OID = 20;
const TYPES = new pg.TypeOverrides();
TYPES.setTypeParser(INT8_OID, (text: string) => {
  const value = Number(text);
  if (!Number.isSafeInteger(value)) throw new RangeError(`bigint ${text} is beyond safe integers`);
  return value;
});

/**
 * The rows one session stored, read straight from the tables (not through
 * the Storage port) over a short-lived pool of its own.
 */
export async function dumpPostgres(
  connectionString: string,
  session: string,
): Promise<PostgresDump> {
  const pool = new pg.Pool({ connectionString, max: 1, connectionTimeoutMillis: 10_000 });
  // An idle connection dying is reported as an event; the query in flight fails on its own.
  pool.on("error", () => undefined);
  try {
    const read = async <R extends pg.QueryResultRow>(text: string): Promise<R[]> =>
      (await pool.query<R>({ text, values: [session], types: TYPES })).rows;
    const entries = await read<EntryRow & pg.QueryResultRow>(PG_ENTRY_ROWS_SQL);
    const revisions = await read<RevisionRow & pg.QueryResultRow>(PG_REVISION_ROWS_SQL);
    const sections: Section[] = [
      entryRowsSection(PG_ENTRY_ROWS_SQL, entries),
      revisionRowsSection(PG_REVISION_ROWS_SQL, revisions),
    ];
    return { entries, revisions, sections };
  } finally {
    await pool.end();
  }
}
