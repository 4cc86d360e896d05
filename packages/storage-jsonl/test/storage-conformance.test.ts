import { registerStorageConformance } from "@durably/contract-tests";
import type { Storage } from "@durably/core";
import { describe, expect, it } from "vitest";
import { openJsonlStorage } from "../src/index.js";
import { ReopeningStorage } from "./support/reopening-storage.js";
import { tempDir } from "./support/temp-dir.js";

const api = { describe, it, expect };

/** A fresh directory per scenario; `reopen` closes the current instance and opens the same directory again. */
function factory(fsync: boolean, wrap: boolean) {
  return async (use: (storage: Storage, reopen?: () => Promise<Storage>) => Promise<void>) => {
    const dir = tempDir();
    const open = (): Promise<Storage> =>
      wrap
        ? ReopeningStorage.open(() => openJsonlStorage(dir.path, { fsync }))
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
registerStorageConformance(api, "JSONL storage reopened after every commit", factory(false, true));
