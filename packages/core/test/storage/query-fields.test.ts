import { describe, expect, it } from "vitest";
import { StorageRequestError } from "../../src/index.js";
import { idField, oneOfField } from "../../src/storage/index.js";

function rejection(run: () => unknown): StorageRequestError {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(StorageRequestError);
    return error as StorageRequestError;
  }
  throw new Error("expected a StorageRequestError");
}

describe("idField", () => {
  it("returns a positive integer id", () => {
    expect(idField("scanTasks", { owner: 7 }, "owner", false)).toBe(7);
    expect(idField("scanTasks", { owner: Number.MAX_SAFE_INTEGER }, "owner", true)).toBe(
      Number.MAX_SAFE_INTEGER,
    );
  });

  it("returns undefined for an absent optional field", () => {
    expect(idField("scanTasks", {}, "owner", false)).toBeUndefined();
    expect(idField("scanTasks", { owner: undefined }, "owner", false)).toBeUndefined();
  });

  it("rejects an absent required field as bad-query naming the scan and field", () => {
    const error = rejection(() => idField("scanEntries", {}, "conversationId", true));
    expect(error.reason).toBe("bad-query");
    expect(error.message).toBe("scanEntries: conversationId is required");
  });

  it.each([0, -1, 1.5, Number.MAX_SAFE_INTEGER + 1, Number.NaN, "3", null, true, [1], { id: 1 }])(
    "rejects %j as bad-query",
    (value) => {
      const error = rejection(() => idField("scanTasks", { owner: value }, "owner", false));
      expect(error.reason).toBe("bad-query");
      expect(error.message).toMatch(/^scanTasks: owner must be a positive integer id, got /);
    },
  );
});

describe("oneOfField", () => {
  const statuses = ["queued", "placed", "done"] as const;
  const booleans = [true, false] as const;

  it("returns an allowed value", () => {
    expect(oneOfField("scanSubmissions", { status: "placed" }, "status", statuses)).toBe("placed");
    expect(oneOfField("scanTasks", { background: false }, "background", booleans)).toBe(false);
    expect(oneOfField<string>("scanTasks", { kind: "" }, "kind", "string")).toBe("");
  });

  it("returns undefined for an absent field", () => {
    expect(oneOfField("scanSubmissions", {}, "status", statuses)).toBeUndefined();
    expect(oneOfField<string>("scanTasks", { kind: undefined }, "kind", "string")).toBeUndefined();
  });

  it("rejects a value outside the allowed set, listing what is allowed", () => {
    const error = rejection(() =>
      oneOfField("scanSubmissions", { status: "lost" }, "status", statuses),
    );
    expect(error.reason).toBe("bad-query");
    expect(error.message).toBe(
      'scanSubmissions: status must be "queued" or "placed" or "done", got "lost"',
    );
  });

  it("rejects a value of the wrong type even when it looks alike", () => {
    expect(
      rejection(() => oneOfField("scanTasks", { background: "true" }, "background", booleans))
        .reason,
    ).toBe("bad-query");
    expect(
      rejection(() => oneOfField("scanTasks", { background: 1 }, "background", booleans)).reason,
    ).toBe("bad-query");
    expect(
      rejection(() => oneOfField("scanTasks", { background: null }, "background", booleans)).reason,
    ).toBe("bad-query");
  });

  it('rejects a non-string when any string is allowed ("string")', () => {
    const error = rejection(() =>
      oneOfField<string>("scanDocuments", { kind: 3 }, "kind", "string"),
    );
    expect(error.reason).toBe("bad-query");
    expect(error.message).toBe("scanDocuments: kind must be a string, got 3");
  });
});
