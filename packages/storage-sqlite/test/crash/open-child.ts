import type { Storage } from "@durably/core";
import { openSqliteStorage } from "../../src/index.js";

/** How a crash child opens this backend (the shape the shared crash suite loads). */
export async function open(path: string): Promise<Storage> {
  return openSqliteStorage(path);
}
