import { mkdirSync, readdirSync, readFileSync, rmdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { StorageIOError, type ConversationId, type EntryId, type Storage } from "@durably/core";
import { runWithFault, straceSupport } from "@durably/contract-tests";
import { afterEach, describe, expect, it } from "vitest";
import { openJsonlStorage } from "../src/index.js";
import { tempDir } from "./support/temp-dir.js";

// An operating-system failure while a storage opens (a read of a file, a
// repair's write or rename) is a typed StorageIOError naming the file and the
// call, with the system error as its cause; the directory is left as it was.

const dirs: { remove(): void }[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) d.remove();
});

/** A storage holding one conversation with one entry and one document. */
async function populated(): Promise<string> {
  const dir = tempDir();
  dirs.push(dir);
  const storage: Storage = await openJsonlStorage(dir.path);
  const c = 1 as ConversationId;
  await storage.commit(
    [
      [
        { type: "conversation", value: { id: c } },
        { type: "entry", value: { id: 2 as EntryId, conversationId: c, kind: "note" } },
      ],
    ],
    () => undefined,
  );
  await storage.close();
  return dir.path;
}

/** Every file's name, size and bytes, to show nothing changed. */
function contents(dir: string): string {
  return readdirSync(dir, { recursive: true, encoding: "utf8" })
    .sort()
    .map((name) => {
      const path = join(dir, name);
      return statSync(path).isDirectory()
        ? `${name}/`
        : `${name} ${readFileSync(path).toString("base64")}`;
    })
    .join("\n");
}

describe("JSONL open: system errors", () => {
  it("a directory where a document file should be: StorageIOError naming the file and the call, cause EISDIR; nothing changed, and once it is gone the storage opens", async () => {
    const dir = await populated();
    mkdirSync(join(dir, "doc-7.jsonl"));
    const before = contents(dir);
    const error = await openJsonlStorage(dir).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StorageIOError);
    expect(error).toMatchObject({
      code: "STORAGE_IO",
      location: { file: "doc-7.jsonl" },
      message: expect.stringContaining(
        "read failed on doc-7.jsonl while opening (EISDIR)",
      ) as unknown,
      cause: { code: "EISDIR" },
    });
    expect(contents(dir)).toBe(before);
    rmdirSync(join(dir, "doc-7.jsonl"));
    const storage = await openJsonlStorage(dir);
    expect((await storage.entry(2 as EntryId))?.entry.kind).toBe("note");
    await storage.close();
  });

  it("a directory named LOCK: StorageIOError naming LOCK (location.file), cause EISDIR; nothing changed, and once it is gone the storage opens", async () => {
    const dir = await populated();
    mkdirSync(join(dir, "LOCK"));
    const before = contents(dir);
    const error = await openJsonlStorage(dir).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StorageIOError);
    expect(error).toMatchObject({
      code: "STORAGE_IO",
      location: { file: "LOCK" },
      message: expect.stringContaining("read failed on LOCK while opening (EISDIR)") as unknown,
      cause: { code: "EISDIR", path: join(dir, "LOCK") },
    });
    expect(contents(dir)).toBe(before);
    rmdirSync(join(dir, "LOCK"));
    const storage = await openJsonlStorage(dir);
    expect((await storage.entry(2 as EntryId))?.entry.kind).toBe("note");
    await storage.close();
  });

  const strace = straceSupport();
  it.skipIf(!strace.usable)(
    "EIO injected (strace) into the opening of main.jsonl at open: StorageIOError naming main.jsonl, cause EIO; the next open reads everything",
    async () => {
      if (!strace.usable) return;
      const dir = await populated();
      const before = contents(dir);
      const child = fileURLToPath(new URL("./support/open-report-child.ts", import.meta.url));
      const run = runWithFault(
        strace,
        { path: join(dir, "main.jsonl"), syscalls: "openat", errno: "EIO", when: "1" },
        [process.execPath, "--conditions=@durably/source", "--import", "tsx", child, dir],
      );
      expect(run.status, run.stderr).toBe(0);
      const report = JSON.parse(run.stdout.trim().split("\n").at(-1) as string) as {
        name: string;
        location: unknown;
        cause: string;
      };
      expect(report).toEqual({
        name: "StorageIOError",
        location: { file: "main.jsonl" },
        cause: "EIO",
      });
      expect(contents(dir)).toBe(before);
      const storage = await openJsonlStorage(dir);
      expect((await storage.entry(2 as EntryId))?.entry.kind).toBe("note");
      await storage.close();
    },
    90_000,
  );
});
