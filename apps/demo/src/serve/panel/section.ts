import type { ConversationId } from "@durably/core";

/** Rows of one query or key range, newest last; `omitted` older ones were left out. */
export interface TableSection {
  type: "table";
  title: string;
  columns: string[];
  rows: string[][];
  omitted: number;
}

/** Lines of one file, with their line numbers when known. */
export interface LinesSection {
  type: "lines";
  title: string;
  lines: { n?: number; text: string }[];
  omitted: number;
}

export type PanelSection = TableSection | LinesSection;

/** What the storage panel shows for one conversation: what the backend stored behind the view. */
export interface StoragePanel {
  /** One sentence: what these sections are and how they were read. */
  summary: string;
  sections: PanelSection[];
}

/** Reads the panel of a conversation from an open storage, in the same process as its owner. */
export interface PanelReader {
  read(conversationId: ConversationId): Promise<StoragePanel>;
  /** Releases what the reader holds of its own (a connection pool); the storage itself is not closed. */
  close(): Promise<void>;
}

/** Rows per section: the newest are kept, the count of the rest is shown. */
export const PANEL_ROWS = 40;
/** A cell longer than this is cut (the page is a window on storage, not a dump of it). */
const CELL_CHARS = 600;

export function cell(value: unknown): string {
  const text =
    value === null || value === undefined
      ? "NULL"
      : typeof value === "string"
        ? value
        : typeof value === "number" || typeof value === "boolean" || typeof value === "bigint"
          ? String(value)
          : JSON.stringify(value);
  return text.length <= CELL_CHARS
    ? text
    : `${text.slice(0, CELL_CHARS)}… (${text.length - CELL_CHARS} more characters)`;
}

/** A table section from rows that are already the newest `PANEL_ROWS` (or fewer), oldest first. */
export function tableSection(
  title: string,
  columns: readonly string[],
  rows: readonly Record<string, unknown>[],
  total: number,
): TableSection {
  return {
    type: "table",
    title,
    columns: [...columns],
    rows: rows.map((row) => columns.map((c) => cell(row[c]))),
    omitted: Math.max(0, total - rows.length),
  };
}

/** Keeps the newest `PANEL_ROWS` items of a list, oldest first, and how many were left out. */
export function newest<T>(items: readonly T[]): { kept: T[]; omitted: number } {
  const kept = items.slice(Math.max(0, items.length - PANEL_ROWS));
  return { kept, omitted: items.length - kept.length };
}
