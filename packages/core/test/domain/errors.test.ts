import { describe, expect, it } from "vitest";
import { DurablyError, StorageCorrupted, StorageIOError } from "../../src/index.js";

describe("storage errors", () => {
  it("StorageIOError says where the I/O failed and keeps the original error", () => {
    const cause = Object.assign(new Error("EIO: i/o error, read"), { code: "EIO" });
    const error = new StorageIOError("main.jsonl: read failed", { file: "main.jsonl" }, { cause });
    expect(error).toBeInstanceOf(DurablyError);
    expect(error.name).toBe("StorageIOError");
    expect(error.code).toBe("STORAGE_IO");
    expect(error.location).toEqual({ file: "main.jsonl" });
    expect(error.cause).toBe(cause);
    expect(error).not.toBeInstanceOf(StorageCorrupted);
  });
});
