import type { Storage } from "@durably/core";
import { openSqliteStorage } from "../../src/index.js";

/** How a crash child opens this backend with `synchronous: "full"` (every commit fsynced before it is acknowledged). */
export async function open(path: string): Promise<Storage> {
  return openSqliteStorage(path, { synchronous: "full" });
}
