import { mkdtemp, mkdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { detectBackend } from "../src/detect.ts";

const SQLITE_HEADER = "SQLite format 3\0";

describe("detectBackend", () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), "durably-detect-"));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("recognises a SQLite file by its header", async () => {
    const file = join(dir, "any-name.db");
    await writeFile(file, SQLITE_HEADER + "rest of page");
    expect(await detectBackend(file)).toEqual({ backend: "sqlite", file });
  });

  it("recognises the demo's durably.sqlite inside a directory", async () => {
    await writeFile(join(dir, "durably.sqlite"), SQLITE_HEADER);
    expect(await detectBackend(dir)).toEqual({
      backend: "sqlite",
      file: join(dir, "durably.sqlite"),
    });
  });

  it("recognises a JSONL directory by main.jsonl", async () => {
    await writeFile(join(dir, "main.jsonl"), "");
    expect(await detectBackend(dir)).toEqual({ backend: "jsonl", dir });
  });

  it("recognises a LevelDB directory by its CURRENT and LOCK files", async () => {
    await writeFile(join(dir, "CURRENT"), "MANIFEST-000001\n");
    await writeFile(join(dir, "LOCK"), "");
    expect(await detectBackend(dir)).toEqual({ backend: "store", dir });
  });

  it("refuses a file that is not a SQLite database, naming the path", async () => {
    const file = join(dir, "notes.txt");
    await writeFile(file, "SQLite format 2 is not a thing");
    await expect(detectBackend(file)).rejects.toThrow(`${file}: not a SQLite database`);
  });

  it("refuses a directory holding no storage, saying what it looked for", async () => {
    await mkdir(join(dir, "main.jsonl.d"));
    await writeFile(join(dir, "CURRENT"), "");
    await expect(detectBackend(dir)).rejects.toThrow(
      /no Durably storage found \(looked for main\.jsonl/,
    );
  });

  it("refuses an ambiguous directory instead of guessing", async () => {
    await writeFile(join(dir, "main.jsonl"), "");
    await writeFile(join(dir, "CURRENT"), "");
    await writeFile(join(dir, "LOCK"), "");
    await expect(detectBackend(dir)).rejects.toThrow(/ambiguous, holds both jsonl and store/);
  });

  it("refuses a missing path", async () => {
    await expect(detectBackend(join(dir, "nope"))).rejects.toThrow(
      /nope: no such file or directory/,
    );
  });
});
