import { registerSessionConformance, registerStorageConformance } from "@durably/contract-tests";
import type { StorageFactory } from "@durably/contract-tests";
import { describe, expect, it } from "vitest";
import type { Storage } from "@durably/core";
import { StoreStorage } from "../src/index.js";
import { backends, type Backend } from "./backends.js";

/** A fresh StoreStorage per scenario; persistent backends also get `reopen()`. */
function factory(backend: Backend): StorageFactory {
  return async (use) => {
    const { store, reopen, cleanup } = backend.fresh();
    let current: Storage = await StoreStorage.open(store);
    try {
      if (reopen === undefined) await use(current);
      else
        await use(current, async () => {
          // One owner at a time (LevelDB holds a lock): close the current instance before opening again.
          await current.close();
          current = await StoreStorage.open(reopen());
          return current;
        });
    } finally {
      await current.close();
      cleanup();
    }
  };
}

for (const backend of backends) {
  const name = `StoreStorage on ${backend.name}`;
  registerStorageConformance({ describe, it, expect }, name, factory(backend));
  registerSessionConformance({ describe, it, expect }, name, factory(backend));
}
