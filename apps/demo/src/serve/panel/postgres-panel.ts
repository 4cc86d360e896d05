import pg from "pg";
import { PG_SCHEMA } from "../../postgres-config.js";
import { PANEL_ROWS, tableSection, type PanelReader, type TableSection } from "./section.js";

interface Query {
  columns: string[];
  table: string;
  /** `$2` is the conversation id, or its document scope (`c:<id>`) where `scope` is set. */
  where: string;
  order: string;
  scope?: boolean;
}

const QUERIES: Query[] = [
  {
    columns: ["id", "commit_seq", "record"],
    table: "entries",
    where: "conversation_id = $2",
    order: "id",
  },
  {
    columns: ["id", "status", "request_json", "record"],
    table: "submissions",
    where: "conversation_id = $2",
    order: "id",
  },
  {
    columns: ["id", "kind", "status", "record"],
    table: "tasks",
    where: "conversation_id = $2",
    order: "id",
  },
  {
    columns: ["id", "kind", "created_at", "retired_at", "version", "base_seq"],
    table: "documents",
    where: "scope = $2",
    order: "id",
    scope: true,
  },
  {
    columns: ["document_id", "seq", "kind", "content"],
    table: "document_revisions",
    where: `document_id IN (SELECT id FROM ${PG_SCHEMA}.documents d WHERE d.session_key = $1 AND d.scope = $2)`,
    order: "seq",
    scope: true,
  },
];

/** bigint columns come back as strings from pg; the panel shows them as they are. */
function statement(q: Query, session: string, value: string | number): string {
  const literal = typeof value === "number" ? String(value) : `'${value}'`;
  const where = q.where
    .replaceAll("$1", `'${session.replaceAll("'", "''")}'`)
    .replaceAll("$2", literal);
  return `SELECT ${q.columns.join(", ")} FROM ${PG_SCHEMA}.${q.table} WHERE session_key = '${session.replaceAll("'", "''")}' AND ${where} ORDER BY ${q.order}`;
}

/**
 * The rows of one session behind a conversation, read over a small pool of
 * the panel's own (PostgreSQL lets a second connection read what the owner
 * committed; the lease only fences writers).
 */
export function postgresPanel(connectionString: string, session: string): PanelReader {
  const pool = new pg.Pool({ connectionString, max: 1, connectionTimeoutMillis: 10_000 });
  // An idle connection dying is reported as an event; the query in flight fails on its own.
  pool.on("error", () => undefined);
  return {
    async read(conversationId) {
      const sections: TableSection[] = [];
      for (const q of QUERIES) {
        const value = q.scope ? `c:${conversationId}` : conversationId;
        const from = `${PG_SCHEMA}.${q.table} WHERE session_key = $1 AND ${q.where}`;
        const total = await pool.query<{ n: string }>(`SELECT COUNT(*) AS n FROM ${from}`, [
          session,
          value,
        ]);
        const rows = await pool.query<Record<string, unknown>>(
          `SELECT * FROM (SELECT ${q.columns.join(", ")} FROM ${from} ORDER BY ${q.order} DESC LIMIT ${PANEL_ROWS}) newest ORDER BY ${q.order}`,
          [session, value],
        );
        sections.push(
          tableSection(
            statement(q, session, value),
            q.columns,
            rows.rows,
            Number(total.rows[0]?.n ?? 0),
          ),
        );
      }
      return {
        summary: `Rows of session ${JSON.stringify(session)} in schema ${PG_SCHEMA}, read over a connection of the viewer's own.`,
        sections,
      };
    },
    close: () => pool.end(),
  };
}
