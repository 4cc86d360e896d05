import { describe, expect, it } from "vitest";
import { colourWanted, makeStyle, visibleLength } from "../src/render/style.ts";
import { renderTable } from "../src/render/table.ts";

describe("renderTable", () => {
  it("aligns every column to its widest cell, right-aligning numeric columns", () => {
    const lines = renderTable({
      columns: [{ header: "backend" }, { header: "seq", align: "right" }, { header: "value" }],
      rows: [
        ["memory", "2", '{"text":"after hello"}'],
        ["sqlite", "12", "x"],
      ],
    });
    expect(lines).toEqual([
      "  backend  seq  value",
      "  ───────  ───  ──────────────────────",
      '  memory     2  {"text":"after hello"}',
      "  sqlite    12  x",
    ]);
  });

  it("cuts a cell longer than its column's maxWidth with an ellipsis", () => {
    const lines = renderTable(
      { columns: [{ header: "v", maxWidth: 5 }], rows: [["abcdefgh"]] },
      undefined,
      "",
    );
    expect(lines[2]).toBe("abcd…");
  });

  it("measures coloured cells by their visible width", () => {
    const style = makeStyle(true);
    const lines = renderTable(
      {
        columns: [{ header: "a" }, { header: "b" }],
        rows: [
          [style.green("ok"), "1"],
          ["long", "2"],
        ],
      },
      undefined,
      "",
    );
    expect(visibleLength(lines[2] ?? "")).toBe(visibleLength(lines[3] ?? ""));
    expect(lines[2]).toContain("\u001b[32mok\u001b[39m    1");
  });

  it("rejects a row with the wrong number of cells", () => {
    expect(() => renderTable({ columns: [{ header: "a" }], rows: [["1", "2"]] })).toThrow(
      /row 0 has 2 cells, expected 1/,
    );
  });
});

describe("colourWanted", () => {
  it("colours a TTY only, and never when NO_COLOR is set to something", () => {
    expect(colourWanted({ isTTY: true }, {})).toBe(true);
    expect(colourWanted({ isTTY: false }, {})).toBe(false);
    expect(colourWanted({}, {})).toBe(false);
    expect(colourWanted({ isTTY: true }, { NO_COLOR: "1" })).toBe(false);
    expect(colourWanted({ isTTY: true }, { NO_COLOR: "" })).toBe(true);
  });
});
