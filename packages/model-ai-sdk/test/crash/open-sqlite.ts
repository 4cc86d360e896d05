import type { Storage } from "@durably/core";
import { openSqliteStorage } from "@durably/storage-sqlite";

/** How a crash child opens its storage (the shape the shared crash suite loads). */
export function open(path: string): Promise<Storage> {
  return openSqliteStorage(path);
}
