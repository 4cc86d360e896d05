import type { Output } from "../render/output.js";
import { renderTable, type Table } from "../render/table.js";
import { subheading } from "../render/heading.js";

/** One part of what a backend stored: a table of rows, or raw lines of a file. */
export type Section = { title: string; table: Table } | { title: string; lines: readonly string[] };

export function printSections(out: Output, sections: readonly Section[]): void {
  for (const section of sections) {
    subheading(out, section.title);
    if ("table" in section) {
      if (section.table.rows.length === 0) out.line(out.style.dim("  (no rows)"));
      else out.lines(renderTable(section.table, out.style));
    } else if (section.lines.length === 0) {
      out.line(out.style.dim("  (empty)"));
    } else {
      const width = String(section.lines.length).length;
      section.lines.forEach((line, i) => {
        out.line(`  ${out.style.dim(String(i + 1).padStart(width))}  ${line}`);
      });
    }
  }
}
