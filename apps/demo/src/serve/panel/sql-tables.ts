import type { ConversationId } from "@durably/core";
import { PANEL_ROWS, tableSection, type TableSection } from "./section.js";

/**
 * One query of a SQL panel: the newest rows (by `order`) of what the WHERE
 * clause selects, plus the total. `{value}` in `where` stands for the
 * conversation id, or the conversation's document scope (`c:<id>`) where the
 * table keys by scope; each backend writes it in its own placeholder syntax.
 */
export interface PanelQuery {
  columns: string[];
  table: string;
  where: string;
  order: string;
  scope?: boolean;
}

/**
 * The tables behind a conversation, the same on SQLite and PostgreSQL but for
 * the submission's request column and how document revisions find their
 * scope's documents (`documentsOfScope`, a subquery in the backend's syntax).
 */
export function conversationQueries(requestColumn: string, documentsOfScope: string): PanelQuery[] {
  return [
    {
      columns: ["id", "commit_seq", "record"],
      table: "entries",
      where: "conversation_id = {value}",
      order: "id",
    },
    {
      columns: ["id", "status", requestColumn, "record"],
      table: "submissions",
      where: "conversation_id = {value}",
      order: "id",
    },
    {
      columns: ["id", "kind", "status", "record"],
      table: "tasks",
      where: "conversation_id = {value}",
      order: "id",
    },
    {
      columns: ["id", "kind", "created_at", "retired_at", "version", "base_seq"],
      table: "documents",
      where: "scope = {value}",
      order: "id",
      scope: true,
    },
    {
      columns: ["document_id", "seq", "kind", "content"],
      table: "document_revisions",
      where: `document_id IN (${documentsOfScope})`,
      order: "seq",
      scope: true,
    },
  ];
}

/** What a backend runs for one query: the total and the newest PANEL_ROWS rows, and the title to show. */
export interface SqlRunner {
  count(q: PanelQuery, value: string | number): Promise<number>;
  /** The newest `limit` rows in `order`, oldest first. */
  newest(q: PanelQuery, value: string | number, limit: number): Promise<Record<string, unknown>[]>;
  /** The statement a user could run in the backend's own client to see the same rows. */
  title(q: PanelQuery, value: string | number): string;
}

/** The panel's table sections for a conversation, one per query. */
export async function readTables(
  queries: readonly PanelQuery[],
  conversationId: ConversationId,
  run: SqlRunner,
): Promise<TableSection[]> {
  const sections: TableSection[] = [];
  for (const q of queries) {
    const value = q.scope ? `c:${conversationId}` : conversationId;
    const total = await run.count(q, value);
    const rows = await run.newest(q, value, PANEL_ROWS);
    sections.push(tableSection(run.title(q, value), q.columns, rows, total));
  }
  return sections;
}

/** A value as a SQL literal, for the titles only (the queries themselves bind it). */
export function titleLiteral(value: string | number): string {
  return typeof value === "number" ? String(value) : `'${value.replaceAll("'", "''")}'`;
}
