import { registerStorageConformance } from "@durably/contract-tests";
import type { Storage } from "@durably/core";
import { describe, expect, it } from "vitest";
import { openJsonlStorage, type JsonlStorage } from "../src/index.js";
import { compactingAfterEveryCommit } from "./support/background-compaction.js";
import { ReopeningStorage } from "./support/reopening-storage.js";
import { tempDir } from "./support/temp-dir.js";

const api = { describe, it, expect };

/** A fresh directory per scenario; `reopen` closes the current instance and opens the same directory again. */
function factory(
  fsync: boolean,
  wrap: false | "reopen" | "compact, reopen" | "compact in background",
) {
  return async (use: (storage: Storage, reopen?: () => Promise<Storage>) => Promise<void>) => {
    const dir = tempDir();
    const compact = (storage: Storage) => (storage as JsonlStorage).compact();
    const open = async (): Promise<Storage> =>
      wrap === "reopen"
        ? ReopeningStorage.open(() => openJsonlStorage(dir.path, { fsync }))
        : wrap === "compact, reopen"
          ? ReopeningStorage.open(() => openJsonlStorage(dir.path, { fsync }), compact)
          : wrap === "compact in background"
            ? compactingAfterEveryCommit(await openJsonlStorage(dir.path, { fsync }))
            : openJsonlStorage(dir.path, { fsync });
    let current = await open();
    try {
      await use(current, async () => {
        await current.close();
        current = await open();
        return current;
      });
    } finally {
      await current.close();
      dir.remove();
    }
  };
}

registerStorageConformance(api, "JSONL storage", factory(false, false));
registerStorageConformance(api, "JSONL storage (fsync)", factory(true, false));
registerStorageConformance(
  api,
  "JSONL storage reopened after every commit",
  factory(false, "reopen"),
);
registerStorageConformance(
  api,
  "JSONL storage compacted and reopened after every commit",
  factory(false, "compact, reopen"),
);
registerStorageConformance(
  api,
  "JSONL storage compacting in the background after every commit",
  factory(false, "compact in background"),
);
