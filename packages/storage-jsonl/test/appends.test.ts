import { statSync } from "node:fs";
import type { DocumentId, EntryId } from "@durably/core";
import { describe, expect, it } from "vitest";
import { openJsonlStorage } from "../src/index.js";
import { commitAll, w } from "./support/records.js";
import { directoryPerTest } from "./support/test-directory.js";

const dir = directoryPerTest();

// Short appends are written on the calling thread, longer ones on libuv's pool
// (node-file-system.ts); a commit call ends with a turn of the event loop.
describe("appends > on the calling thread and on the pool", () => {
  it("a caller committing in a loop leaves turns for timers and I/O callbacks", async () => {
    for (const fsync of [false, true]) {
      const storage = await openJsonlStorage(`${dir.path}/fsync-${fsync}`, { fsync });
      await commitAll(storage, [w.conversation(1)]);
      let fired = false;
      const timer = setTimeout(() => (fired = true), 1);
      let commits = 0;
      // Without a turn per call, every commit resolves in microtasks and the timer
      // never runs: the loop would stop at the cap.
      while (!fired && commits < 5_000) {
        commits++;
        await commitAll(storage, [w.entry(100 + commits, 1, `step ${commits}`)]);
      }
      clearTimeout(timer);
      expect({ fsync, fired }).toEqual({ fsync, fired: true });
      expect(commits).toBeLessThan(5_000);
      await storage.close();
    }
  });

  it("one call with a short line and lines past 64 KiB (pool writes) stores all of them; a reopen reads them back", async () => {
    const storage = await openJsonlStorage(dir.path);
    await commitAll(storage, [
      w.conversation(1),
      w.createDoc(4, 1, { text: "" }),
      w.createDoc(5, 1, { text: "" }),
    ]);
    const long = "ł".repeat(100_000); // 200,000 bytes of UTF-8 in one line
    await commitAll(storage, [w.setText(4, "short"), w.setText(5, long), w.entry(6, 1, long)]);
    await storage.close();
    // The long document line went to its own file, the long entry inline into main.jsonl.
    expect(statSync(dir.file("doc-5.jsonl")).size).toBeGreaterThan(200_000);
    expect(statSync(dir.file("main.jsonl")).size).toBeGreaterThan(200_000);
    const reopened = await openJsonlStorage(dir.path);
    expect((await reopened.document(4 as DocumentId, "current"))?.value).toEqual({
      text: "short",
    });
    expect((await reopened.document(5 as DocumentId, "current"))?.value).toEqual({ text: long });
    expect((await reopened.entry(6 as EntryId))?.entry.data).toBe(long);
    await reopened.close();
  });
});
