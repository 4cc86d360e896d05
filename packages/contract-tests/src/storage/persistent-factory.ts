import type { Storage } from "@durably/core";
import type { StorageFactory } from "./api.js";
import { reopeningStorage } from "./reopening-storage.js";

/** Where one test's data lives: how to open it (again), and how to remove it afterwards. */
export interface StorageLocation {
  /** Opens the storage over this location's data: a new instance each call, the same data. */
  open(): Promise<Storage>;
  /** Removes the data once the test is done (a temp directory, a database schema). Optional. */
  remove?(): void | Promise<void>;
}

export interface PersistentFactoryOptions {
  /**
   * Run each test through `reopeningStorage`: the storage is closed and
   * opened again after every commit, so state kept only in memory cannot
   * hide a missing write. An extra pass for persistent adapters.
   */
  reopenAfterEveryCommit?: boolean;
}

/**
 * The factory every persistent adapter otherwise writes by hand: per test, a
 * fresh location from `locate()`; `use` gets an open storage and a `reopen`
 * that closes the current instance and opens the same data again; afterwards
 * the current instance is closed and the location removed (also when the
 * test or an open failed). Works for the storage, session, task and harness
 * suites alike.
 */
export function persistentStorageFactory(
  locate: () => StorageLocation | Promise<StorageLocation>,
  options: PersistentFactoryOptions = {},
): StorageFactory {
  return async (use) => {
    const location = await locate();
    const open = options.reopenAfterEveryCommit
      ? () => reopeningStorage(() => location.open())
      : () => location.open();
    try {
      let current = await open();
      try {
        await use(current, async () => {
          await current.close();
          current = await open();
          return current;
        });
      } finally {
        await current.close(); // idempotent: the test may have closed it already
      }
    } finally {
      await location.remove?.();
    }
  };
}
