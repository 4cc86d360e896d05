import { StorageCorrupted, type DocumentContent, type Json, type Op } from "@durably/core";
import { materializeRevisions, type StoredRevision } from "@durably/core/storage";
import { locateUnsafe } from "./bigint-range.js";
import { query, UnsafeBigint, type Runner } from "./queries.js";
import { parseContent, revisionLocation, type DocumentRow } from "./rows.js";

/** A document's value at one point: what `document()` returns besides the record. */
export interface MaterializedValue {
  version: number;
  value: Json;
  deltasSinceBase: number;
}

/** An incarnation's row with the revisions that govern one point in time (newest base at or before it, then its deltas). */
export interface LoadedDocument {
  row: DocumentRow;
  revisions: StoredRevision[];
}

interface JoinedRow extends DocumentRow {
  r_seq: number | null;
  r_kind: string | null;
  r_content: string | null;
  r_version: number | null;
}

/**
 * One statement (one snapshot, so a concurrent commit can never be half
 * seen) reading the rows and governing revisions of several documents at
 * `$3`: from the newest base at or before it (the row's `base_seq` for
 * current reads) up to it, one primary-key range per document.
 */
function loadSql(s: string): string {
  return `SELECT d.id, d.created_at, d.retired_at, d.rewindable, d.version, d.base_seq, d.record,
      r.seq AS r_seq, r.kind AS r_kind, r.content AS r_content, r.version AS r_version
    FROM ${s}.documents d
    LEFT JOIN ${s}.document_revisions r
      ON r.session_key = d.session_key AND r.document_id = d.id AND r.seq <= $3
     AND r.seq >= CASE WHEN $3 >= d.base_seq THEN d.base_seq ELSE coalesce(
           (SELECT max(b.seq) FROM ${s}.document_revisions b
             WHERE b.session_key = d.session_key AND b.document_id = d.id AND b.kind = 'base' AND b.seq <= $3), 0) END
    WHERE d.session_key = $1 AND d.id = ANY($2::bigint[])
    ORDER BY d.id, r.seq`;
}

/**
 * The newest seq a current read takes revisions up to: the largest bigint,
 * not the largest safe integer, so a damaged seq beyond the safe integers is
 * read (and reported) rather than skipped.
 */
const NEWEST = "9223372036854775807";

/** A joined column's table and name: `r_`-prefixed ones are the revision's. */
function columnPlace(column: string): { table: string; column: string } {
  return column.startsWith("r_")
    ? { table: "document_revisions", column: column.slice(2) }
    : { table: "documents", column };
}

export async function loadDocuments(
  runner: Runner,
  schema: string,
  session: string,
  ids: readonly number[],
  at: number | "current",
): Promise<Map<number, LoadedDocument>> {
  const found = new Map<number, LoadedDocument>();
  if (ids.length === 0) return found;
  const read = {
    runner,
    text: loadSql(schema),
    values: [session, ids, at === "current" ? NEWEST : at],
  };
  const result = await query<JoinedRow>(runner, read.text, read.values).catch(
    async (error: unknown) => {
      if (error instanceof UnsafeBigint)
        throw await locateUnsafe(error, read, session, "documents", columnPlace);
      throw error;
    },
  );
  for (const r of result.rows) {
    let loaded = found.get(r.id);
    if (loaded === undefined) {
      loaded = {
        row: {
          id: r.id,
          created_at: r.created_at,
          retired_at: r.retired_at,
          rewindable: r.rewindable,
          version: r.version,
          base_seq: r.base_seq,
          record: r.record,
        },
        revisions: [],
      };
      found.set(r.id, loaded);
    }
    if (r.r_seq !== null)
      loaded.revisions.push({
        seq: r.r_seq,
        content: revisionContent(
          session,
          r.id,
          r.r_seq,
          r.r_kind ?? "",
          r.r_content ?? "",
          r.r_version ?? 0,
        ),
      });
  }
  return found;
}

/** Where a session's revisions are, for a corruption report. */
export function revisionsWhere(session: string): string {
  return `session ${JSON.stringify(session)} table document_revisions`;
}

/** The value of an incarnation from its loaded revisions (history the caller knows is kept). */
export function materialize(session: string, loaded: LoadedDocument): MaterializedValue {
  return materializeRevisions(loaded.row.id, loaded.revisions, revisionsWhere(session));
}

function revisionContent(
  session: string,
  documentId: number,
  seq: number,
  kind: string,
  content: string,
  version: number,
): DocumentContent {
  const parsed = parseContent(session, documentId, seq, kind, content);
  if (kind === "base") return { kind: "base", version, value: parsed };
  if (kind === "delta") return { kind: "delta", version, ops: parsed as unknown as Op[] };
  // The CHECK constraint keeps this out; a row edited by hand could still hold it.
  throw new StorageCorrupted(
    `session ${JSON.stringify(session)} document_revisions document_id ${documentId} seq ${seq}: unknown revision kind ${JSON.stringify(kind)}`,
    revisionLocation(session, documentId, seq),
  );
}
