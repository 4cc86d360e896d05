import { describe, expect, it } from "vitest";
import { PAGE, appendPaged, flatten, pagedAt, pagedLength, truncatePaged } from "../src/pages.js";

const range = (from: number, to: number) =>
  Array.from({ length: to - from }, (_, i) => `${from + i}`);

describe("lists kept in pages", () => {
  it("fills the last page before starting a new one, and every page but the last is full", () => {
    const pages: string[][] = [];
    appendPaged(pages, range(0, PAGE - 1));
    appendPaged(pages, range(PAGE - 1, PAGE + 2));
    appendPaged(pages, range(PAGE + 2, 3 * PAGE + 5));
    expect(pages.map((p) => p.length)).toEqual([PAGE, PAGE, PAGE, 5]);
    expect(flatten(pages)).toEqual(range(0, 3 * PAGE + 5));
    expect(pagedLength(pages)).toBe(3 * PAGE + 5);
    expect(pagedAt(pages, PAGE + 1)).toBe(`${PAGE + 1}`);
    expect(pagedAt(pages, 3 * PAGE + 5)).toBeUndefined();
  });

  it("truncates to any length, inside a page, on a page boundary, or to nothing", () => {
    for (const keep of [0, 1, PAGE - 1, PAGE, PAGE + 1, 2 * PAGE, 2 * PAGE + 7]) {
      const pages: string[][] = [];
      appendPaged(pages, range(0, 2 * PAGE + 7));
      truncatePaged(pages, keep);
      expect(flatten(pages), `keep ${keep}`).toEqual(range(0, keep));
      expect(
        pages.every((p) => p.length > 0),
        `keep ${keep}`,
      ).toBe(true);
      appendPaged(pages, ["x"]);
      expect(pagedLength(pages), `keep ${keep}`).toBe(keep + 1);
    }
  });
});
