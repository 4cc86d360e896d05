import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { StorageCorrupted } from "@durably/core";
import { afterEach, beforeEach, expect } from "vitest";
import { openJsonlStorage } from "../../src/index.js";
import { tempDir } from "./temp-dir.js";

/** A storage directory made fresh before each test (and removed after), with line-level file access. */
export interface TestDirectory {
  /** The current test's directory. */
  readonly path: string;
  /** The path of `name` inside it. */
  file: (name: string) => string;
  /** The complete lines of a file, without their newlines (an unterminated tail is dropped). */
  lines: (name: string) => string[];
  /** Replaces a file with these lines, each ending in a newline. */
  writeLines: (name: string, lines: readonly string[]) => void;
  /** Replaces a file's lines with `edit(lines)`. */
  rewrite: (name: string, edit: (lines: string[]) => string[]) => void;
}

/** Registers `beforeEach`/`afterEach` hooks: every test of the file gets a fresh real temp directory. */
export function directoryPerTest(): TestDirectory {
  let current: { path: string; remove(): void } | undefined;
  beforeEach(() => {
    current = tempDir();
  });
  afterEach(() => current?.remove());
  const path = (): string => {
    if (current === undefined) throw new Error("the test directory exists only inside a test");
    return current.path;
  };
  const file = (name: string) => join(path(), name);
  const lines = (name: string) => readFileSync(file(name), "utf8").split("\n").slice(0, -1);
  const writeLines = (name: string, text: readonly string[]) =>
    writeFileSync(file(name), text.map((l) => `${l}\n`).join(""));
  return {
    get path() {
      return path();
    },
    file,
    lines,
    writeLines,
    rewrite: (name, edit) => writeLines(name, edit(lines(name))),
  };
}

/** Opens `path`, which must fail with StorageCorrupted; returns that error (closing a storage that opened). */
export async function openFails(path: string): Promise<StorageCorrupted> {
  const error: unknown = await openJsonlStorage(path).then(
    async (s) => {
      await s.close();
      return undefined;
    },
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(StorageCorrupted);
  return error as StorageCorrupted;
}
