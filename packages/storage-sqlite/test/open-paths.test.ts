import { mkdirSync, readdirSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { DurablyError, StorageIOError } from "@durably/core";
import { openSqliteStorage } from "../src/index.js";
import { tempDir } from "./helpers.js";

// Paths SQLite cannot open come out as StorageIOError naming the file and
// what is wrong with the path (found by looking at the path, not at the
// driver's message), with the driver's error as cause, and nothing created.

let dir: ReturnType<typeof tempDir>;
beforeEach(() => {
  dir = tempDir("durably-sqlite-paths-");
});
afterEach(() => dir.cleanup());

/** Every path under the directory, to show the refused open created nothing. */
function tree(): string[] {
  return readdirSync(dir.dir, { recursive: true, encoding: "utf8" })
    .map((name) => `${name}${statSync(join(dir.dir, name)).isDirectory() ? "/" : ""}`)
    .sort();
}

async function refusal(path: string): Promise<StorageIOError> {
  const before = tree();
  const error = await openSqliteStorage(path).then(
    async (storage) => {
      await storage.close();
      throw new Error(`${path} opened, but it should have failed`);
    },
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(StorageIOError);
  expect(error).toBeInstanceOf(DurablyError);
  expect(error).toMatchObject({ code: "STORAGE_IO", location: { file: path } });
  expect((error as Error).message).toContain(path);
  expect(tree()).toEqual(before);
  return error as StorageIOError;
}

describe("openSqliteStorage on a path that cannot be a SQLite file", () => {
  it("the path is a directory: StorageIOError naming it a directory, cause SQLITE_CANTOPEN", async () => {
    const path = join(dir.dir, "adir");
    mkdirSync(path);
    const error = await refusal(path);
    expect(error.message).toMatch(/it is a directory, not a file/);
    expect(error.cause).toMatchObject({ code: "SQLITE_CANTOPEN" });
  });

  it("the parent is a regular file: StorageIOError naming that file as not a directory, cause SQLITE_CANTOPEN", async () => {
    const file = join(dir.dir, "afile");
    writeFileSync(file, "x");
    const path = join(file, "db.sqlite");
    const error = await refusal(path);
    expect(error.message).toContain(`${file} in its path is not a directory`);
    expect(error.cause).toMatchObject({ code: "SQLITE_CANTOPEN" });
  });

  it("a regular file further up the path: StorageIOError naming that file", async () => {
    const file = join(dir.dir, "afile");
    writeFileSync(file, "x");
    const error = await refusal(join(file, "sub", "db.sqlite"));
    expect(error.message).toContain(`${file} in its path is not a directory`);
  });

  it("the parent directory is missing: StorageIOError naming the missing directory (the driver's TypeError is the cause); nothing is created", async () => {
    const parent = join(dir.dir, "missing");
    const error = await refusal(join(parent, "db.sqlite"));
    expect(error.message).toContain(`its parent directory ${parent} does not exist`);
    expect(error.cause).toBeInstanceOf(TypeError);
  });

  it("once the path is fixed, the same path opens", async () => {
    const parent = join(dir.dir, "later");
    await refusal(join(parent, "db.sqlite"));
    mkdirSync(parent);
    const storage = await openSqliteStorage(join(parent, "db.sqlite"));
    await storage.close();
  });
});
