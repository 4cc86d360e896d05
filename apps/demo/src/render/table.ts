import { visibleLength, type Style } from "./style.js";

export interface Column {
  header: string;
  align?: "left" | "right";
  /** Longer cells are cut to this width with an ellipsis, so one huge value cannot wreck the layout. */
  maxWidth?: number;
}

export interface Table {
  columns: readonly Column[];
  rows: readonly (readonly string[])[];
}

const ELLIPSIS = "…";

function cut(text: string, max: number | undefined): string {
  if (max === undefined || visibleLength(text) <= max) return text;
  // Cells are cut before styling is applied by callers that need it; plain text here.
  return [...text].slice(0, Math.max(0, max - 1)).join("") + ELLIPSIS;
}

function pad(text: string, width: number, align: "left" | "right"): string {
  const gap = " ".repeat(Math.max(0, width - visibleLength(text)));
  return align === "right" ? gap + text : text + gap;
}

/**
 * Renders rows under headers with every column aligned, separated by two
 * spaces, headers underlined by a rule. Returns lines without trailing spaces.
 * A row with the wrong number of cells is a programming error and throws.
 */
export function renderTable(table: Table, style?: Style, indent = "  "): string[] {
  const { columns } = table;
  const rows = table.rows.map((row, r) => {
    if (row.length !== columns.length) {
      throw new RangeError(`table row ${r} has ${row.length} cells, expected ${columns.length}`);
    }
    return row.map((cell, c) => cut(cell, columns[c]?.maxWidth));
  });
  const widths = columns.map((column, c) =>
    Math.max(visibleLength(column.header), ...rows.map((row) => visibleLength(row[c] ?? ""))),
  );
  const line = (cells: readonly string[]): string =>
    (
      indent +
      cells.map((cell, c) => pad(cell, widths[c] ?? 0, columns[c]?.align ?? "left")).join("  ")
    ).trimEnd();
  const header = line(columns.map((column) => column.header));
  const rule = line(widths.map((width) => "─".repeat(width)));
  return [
    style ? style.bold(header) : header,
    style ? style.dim(rule) : rule,
    ...rows.map((row) => line(row)),
  ];
}
