import { describe, expect, it } from "vitest";
import {
  conversationId,
  documentId,
  entryId,
  type EntryId,
  seq,
  submissionId,
  taskId,
} from "../../src/index.ts";

const constructors = { conversationId, entryId, taskId, submissionId, documentId, seq };

describe("id constructors", () => {
  it("return the number itself, typed, for every positive safe integer", () => {
    for (const make of Object.values(constructors)) {
      expect(make(1)).toBe(1);
      expect(make(42)).toBe(42);
      expect(make(Number.MAX_SAFE_INTEGER)).toBe(Number.MAX_SAFE_INTEGER);
    }
    const typed: EntryId = entryId(7);
    expect(typed).toBe(7);
  });

  it("refuse anything else with a TypeError naming the kind and the value", () => {
    const bad: [unknown, string][] = [
      [0, "0"],
      [-3, "-3"],
      [1.5, "1.5"],
      [Number.NaN, "NaN"],
      [Number.POSITIVE_INFINITY, "Infinity"],
      [Number.MAX_SAFE_INTEGER + 1, "9007199254740992"],
      ["42", '"42"'],
      [undefined, "undefined"],
      [null, "null"],
      [{}, "object"],
    ];
    for (const [name, make] of Object.entries(constructors))
      for (const [value, shown] of bad)
        expect(() => make(value as number), `${name}(${shown})`).toThrow(
          new TypeError(`${name}(${shown}): ids and seqs are positive safe integers`),
        );
  });
});
