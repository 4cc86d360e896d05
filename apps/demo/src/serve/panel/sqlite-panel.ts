import type { SqliteDatabase } from "@durably/storage-sqlite";
import type { PanelReader } from "./section.js";
import { conversationQueries, readTables, titleLiteral, type PanelQuery } from "./sql-tables.js";

const QUERIES = conversationQueries("request_id", "SELECT id FROM documents WHERE scope = {value}");

const where = (q: PanelQuery, value: string) => q.where.replaceAll("{value}", value);

/**
 * The rows behind a conversation, read on the storage's own connection (the
 * file is locked exclusively, so no other connection could read it). The
 * reads are synchronous driver calls between commits, never inside one.
 */
export function sqlitePanel(db: SqliteDatabase, file: string): PanelReader {
  return {
    async read(conversationId) {
      const sections = await readTables(QUERIES, conversationId, {
        count: async (q, value) =>
          (
            await db.get<{ n: number }>(
              `SELECT COUNT(*) AS n FROM ${q.table} WHERE ${where(q, "?")}`,
              [value],
            )
          )?.n ?? 0,
        newest: (q, value, limit) =>
          db.all<Record<string, unknown>>(
            `SELECT * FROM (SELECT ${q.columns.join(", ")} FROM ${q.table} WHERE ${where(q, "?")} ORDER BY ${q.order} DESC LIMIT ${limit}) ORDER BY ${q.order}`,
            [value],
          ),
        // What a user could run in `sqlite3` to see the same.
        title: (q, value) =>
          `SELECT ${q.columns.join(", ")} FROM ${q.table} WHERE ${where(q, titleLiteral(value))} ORDER BY ${q.order}`,
      });
      return {
        summary: `Rows of ${file}, read on the storage's own connection (the file is locked to its owner).`,
        sections,
      };
    },
    close: () => Promise.resolve(),
  };
}
