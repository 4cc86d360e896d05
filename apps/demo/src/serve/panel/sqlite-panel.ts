import type { SqliteDatabase } from "@durably/storage-sqlite";
import { PANEL_ROWS, tableSection, type PanelReader, type TableSection } from "./section.js";

/**
 * One query of the panel: the newest rows (by `order`) of what the WHERE
 * clause selects, plus the total. `?` is the conversation id, or the
 * conversation's document scope (`c:<id>`) where the table keys by scope.
 */
interface Query {
  columns: string[];
  from: string;
  where: string;
  order: string;
  scope?: boolean;
}

const QUERIES: Query[] = [
  {
    columns: ["id", "commit_seq", "record"],
    from: "entries",
    where: "conversation_id = ?",
    order: "id",
  },
  {
    columns: ["id", "status", "request_id", "record"],
    from: "submissions",
    where: "conversation_id = ?",
    order: "id",
  },
  {
    columns: ["id", "kind", "status", "record"],
    from: "tasks",
    where: "conversation_id = ?",
    order: "id",
  },
  {
    columns: ["id", "kind", "created_at", "retired_at", "version", "base_seq"],
    from: "documents",
    where: "scope = ?",
    order: "id",
    scope: true,
  },
  {
    columns: ["document_id", "seq", "kind", "content"],
    from: "document_revisions",
    where: "document_id IN (SELECT id FROM documents WHERE scope = ?)",
    order: "seq",
    scope: true,
  },
];

/** The statement a section shows as its title: what a user could run in `sqlite3` to see the same. */
function statement(q: Query, value: string | number): string {
  const literal = typeof value === "number" ? String(value) : `'${value}'`;
  return `SELECT ${q.columns.join(", ")} FROM ${q.from} WHERE ${q.where.replace("?", literal)} ORDER BY ${q.order}`;
}

/**
 * The rows behind a conversation, read on the storage's own connection (the
 * file is locked exclusively, so no other connection could read it). The
 * reads are synchronous driver calls between commits, never inside one.
 */
export function sqlitePanel(db: SqliteDatabase, file: string): PanelReader {
  return {
    async read(conversationId) {
      const sections: TableSection[] = [];
      for (const q of QUERIES) {
        const value = q.scope ? `c:${conversationId}` : conversationId;
        const total =
          (
            await db.get<{ n: number }>(`SELECT COUNT(*) AS n FROM ${q.from} WHERE ${q.where}`, [
              value,
            ])
          )?.n ?? 0;
        const rows = await db.all<Record<string, unknown>>(
          `SELECT * FROM (SELECT ${q.columns.join(", ")} FROM ${q.from} WHERE ${q.where} ORDER BY ${q.order} DESC LIMIT ${PANEL_ROWS}) ORDER BY ${q.order}`,
          [value],
        );
        sections.push(tableSection(statement(q, value), q.columns, rows, total));
      }
      return {
        summary: `Rows of ${file}, read on the storage's own connection (the file is locked to its owner).`,
        sections,
      };
    },
    close: () => Promise.resolve(),
  };
}
