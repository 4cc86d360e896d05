import { existsSync, statSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { runWithFault, straceSupport } from "@durably/contract-tests";
import { describe, expect, it } from "vitest";
import type { ConversationId } from "@durably/core";
import { openSqliteStorage } from "../src/index.js";
import { commitRoot, databasePerTest } from "./helpers.js";

const CHILD = fileURLToPath(new URL("./crash/close-child.ts", import.meta.url));
const NODE_ARGS = ["--conditions=@durably/source", "--import", "tsx"];
const COMMITS = 40;

// Whether strace can inject faults here (installed, ptrace permitted): the suites' own probe.
const strace = straceSupport();
const problem = strace.usable ? undefined : strace.reason;
if (problem !== undefined) console.warn(`close fault tests skipped: ${problem}`);

// Created before each test, so the child only opens it: faults hit nothing but the close.
const database = databasePerTest("closing.sqlite", commitRoot);

/**
 * Runs the child under strace, failing `syscalls` with `errno` whenever they
 * touch the database file itself (not its WAL): with the default
 * synchronous mode, only the checkpoint writes and syncs that file.
 */
function closeUnderFault(syscalls: string, errno: string): Record<string, unknown> {
  const { path } = database;
  if (!strace.usable) throw new Error(`strace cannot inject faults here: ${strace.reason}`);
  const run = runWithFault(strace, { path, syscalls, errno }, [
    process.execPath,
    ...NODE_ARGS,
    CHILD,
    path,
    String(COMMITS),
  ]);
  const line = run.stdout.trim().split("\n").pop() ?? "";
  if (run.status !== 0 || !line.startsWith("{"))
    throw new Error(`close child failed (status ${run.status}): ${run.stderr}`);
  return JSON.parse(line) as Record<string, unknown>;
}

describe("close reports a failed final checkpoint (real faults through strace -e inject)", () => {
  it.skipIf(problem !== undefined).each([
    ["fsync,fdatasync", "EIO", "SQLITE_IOERR"],
    ["pwrite64", "EIO", "SQLITE_IOERR"],
    ["pwrite64", "ENOSPC", "SQLITE_FULL"],
  ])(
    "%s failing with %s on the database file makes close reject with StorageIOError naming the file, and the next open has every commit",
    async (syscalls, errno, cause) => {
      const { path } = database;
      const report = closeUnderFault(syscalls, errno);
      expect(report).toMatchObject({
        committed: COMMITS,
        close: "rejected",
        name: "StorageIOError",
        code: "STORAGE_IO",
        file: path,
      });
      expect(report.cause as string).toMatch(new RegExp(`^${cause}`));
      expect(report.message as string).toMatch(/nothing acknowledged is lost/);
      // The commits the checkpoint could not copy are still in the log...
      expect(existsSync(`${path}-wal`)).toBe(true);
      expect(statSync(`${path}-wal`).size).toBeGreaterThan(0);
      // ...and the next open replays it: every acknowledged commit is there.
      const storage = await openSqliteStorage(path);
      const page = await storage.scanEntries({ conversationId: 1 as ConversationId }, 1000);
      expect(page.items.map((e) => e.data)).toEqual(
        Array.from({ length: COMMITS }, (_, i) => `commit ${COMMITS - 1 - i}`),
      );
      await storage.close();
      expect(existsSync(`${path}-wal`)).toBe(false);
    },
  );
});
