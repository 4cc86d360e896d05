import { describe, expect, it } from "vitest";
import { decodeIdCursor, pageFromRows, startAfter } from "../../src/storage/index.js";

type Row = { id: number; name: string };

const rows = (...ids: number[]): Row[] => ids.map((id) => ({ id, name: `row ${id}` }));
const parse = (row: Row): string => row.name;

describe("startAfter", () => {
  it("starts a first page before every id in scan order", () => {
    expect(startAfter("ascending", undefined)).toBe(0);
    expect(startAfter("descending", undefined)).toBeGreaterThan(Number.MAX_SAFE_INTEGER);
  });

  it("continues after the cursor position in either order", () => {
    expect(startAfter("ascending", 5)).toBe(5);
    expect(startAfter("descending", 5)).toBe(5);
  });
});

describe("pageFromRows", () => {
  const scan = "scanTasks";
  const query = { kind: "build" };

  it("has no next when fewer than limit + 1 rows came back", () => {
    const page = pageFromRows(scan, query, 3, rows(1, 2), parse);
    expect(page).toEqual({ items: ["row 1", "row 2"] });
    expect("next" in page).toBe(false);
  });

  it("has no next when exactly limit rows came back", () => {
    const page = pageFromRows(scan, query, 2, rows(1, 2), parse);
    expect(page.items).toEqual(["row 1", "row 2"]);
    expect(page.next).toBeUndefined();
  });

  it("has no next for an empty result", () => {
    expect(pageFromRows(scan, query, 2, [], parse)).toEqual({ items: [] });
  });

  it("drops the extra row and points next at the last item kept", () => {
    const page = pageFromRows(scan, query, 2, rows(4, 7, 9), parse);
    expect(page.items).toEqual(["row 4", "row 7"]);
    expect(page.next).toBeDefined();
    expect(decodeIdCursor(scan, query, page.next)).toBe(7);
  });

  it("works in descending order too (the cursor is the last id kept)", () => {
    const page = pageFromRows(scan, query, 1, rows(9, 7), parse);
    expect(page.items).toEqual(["row 9"]);
    expect(decodeIdCursor(scan, query, page.next)).toBe(9);
  });

  it("binds next to the scan and query it came from", () => {
    const page = pageFromRows(scan, query, 1, rows(1, 2), parse);
    expect(() => decodeIdCursor(scan, { kind: "other" }, page.next)).toThrow(
      expect.objectContaining({ name: "StorageRequestError", reason: "bad-cursor" }),
    );
  });
});
