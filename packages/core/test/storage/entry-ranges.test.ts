import { describe, expect, it } from "vitest";
import { StorageRequestError, type ConversationId } from "../../src/index.js";
import { checkAddress, entryScanRanges } from "../../src/storage/index.js";

const C = 5 as ConversationId;
const P = 2 as ConversationId;
// A fork of P at entry 10: C sees its own entries above 10, then P's up to 10.
const segments = [
  { conversationId: C, minExclusive: 10, maxInclusive: Number.MAX_SAFE_INTEGER },
  { conversationId: P, minExclusive: 0, maxInclusive: 10 },
];

describe("entryScanRanges", () => {
  it("walks segments newest first when descending and oldest first when ascending", () => {
    expect(entryScanRanges(segments, "descending", 1, 100)).toEqual([
      { conversationId: C, lower: 10, upper: 100 },
      { conversationId: P, lower: 0, upper: 10 },
    ]);
    expect(entryScanRanges(segments, "ascending", 1, 100).map((r) => r.conversationId)).toEqual([
      P,
      C,
    ]);
  });

  it("clips to min..max and to the ids after the cursor, dropping empty ranges", () => {
    expect(entryScanRanges(segments, "descending", 4, 100, 8)).toEqual([
      { conversationId: P, lower: 3, upper: 7 },
    ]);
    expect(entryScanRanges(segments, "ascending", 1, 100, 12)).toEqual([
      { conversationId: C, lower: 12, upper: 100 },
    ]);
    expect(entryScanRanges(segments, "ascending", 50, 40)).toEqual([]);
  });
});

describe("checkAddress", () => {
  it("returns only the address fields, with a checked scope", () => {
    expect(checkAddress({ kind: "k", scope: { kind: "session" }, extra: 1 })).toEqual({
      kind: "k",
      scope: { kind: "session" },
    });
    expect(checkAddress({ kind: "k", key: "x", scope: { kind: "session" } })).toEqual({
      kind: "k",
      key: "x",
      scope: { kind: "session" },
    });
  });

  it("rejects a missing kind, a non-string key or a bad scope as bad-argument", () => {
    for (const bad of [
      null,
      { scope: { kind: "session" } },
      { kind: "k", key: 3, scope: { kind: "session" } },
      { kind: "k", scope: { kind: "task" } },
    ]) {
      expect(() => checkAddress(bad)).toThrow(StorageRequestError);
      try {
        checkAddress(bad);
      } catch (error) {
        expect((error as StorageRequestError).reason).toBe("bad-argument");
      }
    }
  });
});
