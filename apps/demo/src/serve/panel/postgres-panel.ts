import pg from "pg";
import { PG_SCHEMA } from "../../postgres-config.js";
import type { PanelReader } from "./section.js";
import { conversationQueries, readTables, titleLiteral, type PanelQuery } from "./sql-tables.js";

/** In the queries `$1` is the session key; `{value}` becomes `$2`. */
const QUERIES = conversationQueries(
  "request_json",
  `SELECT id FROM ${PG_SCHEMA}.documents d WHERE d.session_key = $1 AND d.scope = {value}`,
);

const from = (q: PanelQuery) =>
  `${PG_SCHEMA}.${q.table} WHERE session_key = $1 AND ${q.where.replaceAll("{value}", "$2")}`;

/**
 * The rows of one session behind a conversation, read over a small pool of
 * the panel's own (PostgreSQL lets a second connection read what the owner
 * committed; the lease only fences writers). bigint columns come back as
 * strings from pg; the panel shows them as they are.
 */
export function postgresPanel(connectionString: string, session: string): PanelReader {
  const pool = new pg.Pool({ connectionString, max: 1, connectionTimeoutMillis: 10_000 });
  // An idle connection dying is reported as an event; the query in flight fails on its own.
  pool.on("error", () => undefined);
  return {
    async read(conversationId) {
      const sections = await readTables(QUERIES, conversationId, {
        count: async (q, value) => {
          const total = await pool.query<{ n: string }>(`SELECT COUNT(*) AS n FROM ${from(q)}`, [
            session,
            value,
          ]);
          return Number(total.rows[0]?.n ?? 0);
        },
        newest: async (q, value, limit) =>
          (
            await pool.query<Record<string, unknown>>(
              `SELECT * FROM (SELECT ${q.columns.join(", ")} FROM ${from(q)} ORDER BY ${q.order} DESC LIMIT ${limit}) newest ORDER BY ${q.order}`,
              [session, value],
            )
          ).rows,
        // What a user could run in `psql` to see the same.
        title: (q, value) =>
          `SELECT ${q.columns.join(", ")} FROM ${from(q)
            .replaceAll("$1", titleLiteral(session))
            .replaceAll("$2", titleLiteral(value))} ORDER BY ${q.order}`,
      });
      return {
        summary: `Rows of session ${JSON.stringify(session)} in schema ${PG_SCHEMA}, read over a connection of the viewer's own.`,
        sections,
      };
    },
    close: () => pool.end(),
  };
}
