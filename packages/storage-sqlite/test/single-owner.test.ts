import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { StorageLocked, type ConversationId } from "@durably/core";
import { openSqliteStorage } from "../src/index.js";
import { spawnChild } from "./child-process.js";
import { tempDir } from "./helpers.js";

let dir: ReturnType<typeof tempDir>;
let path: string;
beforeEach(() => {
  dir = tempDir();
  path = join(dir.dir, "owned.sqlite");
});
afterEach(() => dir.cleanup());

describe("single owner", () => {
  it("a second open in another process fails with StorageLocked naming the file; after SIGKILL of the owner a reopen succeeds at once", async () => {
    const owner = spawnChild("hold.ts", ["hold", path]);
    try {
      await owner.waitFor(/^ready$/);
      const error = await openSqliteStorage(path).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(StorageLocked);
      expect((error as Error).message).toContain(path);
    } finally {
      owner.process.kill("SIGKILL");
      await owner.exited;
    }
    const started = Date.now();
    const storage = await openSqliteStorage(path);
    expect(Date.now() - started).toBeLessThan(1000);
    await storage.commit(
      [[{ type: "conversation", value: { id: 1 as ConversationId } }]],
      () => undefined,
    );
    await storage.close();
  });

  it("while this process owns the file, another process is refused; a second open in this process is refused too", async () => {
    const storage = await openSqliteStorage(path);
    try {
      await expect(openSqliteStorage(path)).rejects.toBeInstanceOf(StorageLocked);
      const other = spawnChild("hold.ts", ["try", path]);
      const line = await other.waitFor(/^(opened|failed)/);
      await other.exited;
      expect(line).toMatch(/^failed StorageLocked .*owned\.sqlite/);
      // The refused opens changed nothing: the owner keeps working.
      await storage.commit(
        [[{ type: "conversation", value: { id: 1 as ConversationId } }]],
        () => undefined,
      );
      expect(await storage.conversation(1 as ConversationId)).toEqual({ id: 1 });
    } finally {
      await storage.close();
    }
    const after = spawnChild("hold.ts", ["try", path]);
    expect(await after.waitFor(/^(opened|failed)/)).toBe("opened");
    await after.exited;
  });
});
