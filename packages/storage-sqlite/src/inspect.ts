/** The stored entries as rows, oldest first, each with its JSON `data` pulled out (for demos and debugging). */
export const ENTRY_ROWS_SQL =
  "SELECT id, conversation_id, commit_seq, json_extract(record, '$.data') AS data FROM entries ORDER BY id";

/** The stored document revisions in commit order: a base holds the value, a delta its ops. */
export const REVISION_ROWS_SQL =
  "SELECT document_id, seq, kind, content FROM document_revisions ORDER BY seq";
