import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ConversationId, Seq } from "@durably/core";
import Database from "better-sqlite3";
import { afterEach, beforeEach } from "vitest";
import { openSqliteStorage, type SqliteStorage } from "../src/index.js";

/** A fresh temporary directory, removed by the returned cleanup. */
export function tempDir(prefix = "durably-sqlite-"): { dir: string; cleanup: () => void } {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/** A `receive` callback that records every seq, in call order. */
export function seqRecorder(): { seqs: Seq[]; receive: (index: number, seq: Seq) => void } {
  const seqs: Seq[] = [];
  return { seqs, receive: (index, seq) => void (seqs[index] = seq) };
}

/**
 * Registers `beforeEach`/`afterEach` hooks: before each test, a fresh temp
 * directory holding the database file `name`, opened, given `seed`'s commits
 * and closed (so the test starts from a file on disk, nothing open); after
 * it, the directory is removed. `path` is the current test's file.
 */
export function databasePerTest(
  name: string,
  seed: (storage: SqliteStorage) => Promise<unknown>,
): { readonly path: string } {
  let current: { dir: ReturnType<typeof tempDir>; path: string } | undefined;
  beforeEach(async () => {
    const dir = tempDir(`durably-sqlite-${name.replace(/\.sqlite$/, "")}-`);
    const path = join(dir.dir, name);
    current = { dir, path };
    const writer = await openSqliteStorage(path);
    try {
      await seed(writer);
    } finally {
      await writer.close();
    }
  });
  afterEach(() => current?.dir.cleanup());
  return {
    get path() {
      if (current === undefined) throw new Error("the test database exists only inside a test");
      return current.path;
    },
  };
}

/** Commits the root conversation (1): the smallest database worth opening. */
export async function commitRoot(storage: SqliteStorage): Promise<void> {
  await storage.commit([[{ type: "conversation", value: { id: 1 as ConversationId } }]], () => {});
}

/** Runs `sql` on a closed database file through a raw connection, as a stray tool's edit would. */
export function editDatabase(path: string, sql: string): void {
  const raw = new Database(path);
  try {
    raw.exec(sql);
  } finally {
    raw.close();
  }
}

/** Opens `path`, which must fail: returns the error, or throws (failing the test) if it opened. */
export async function openFailure(path: string): Promise<unknown> {
  const opened = await openSqliteStorage(path).then(
    (storage) => storage,
    (error: unknown) => ({ error }),
  );
  if ("error" in opened) return opened.error;
  await opened.close();
  throw new Error(`${path} opened, but it should have failed`);
}
