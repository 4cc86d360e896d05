import type { Storage } from "@durably/core";
import { openWithFsync } from "./open-child.js";

/** `open(path)` with `fsync: true`, for suites that load a module exporting `open`. */
export async function open(path: string): Promise<Storage> {
  return openWithFsync(path);
}
