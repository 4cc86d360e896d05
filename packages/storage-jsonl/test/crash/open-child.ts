import type { Storage } from "@durably/core";
import { openJsonlStorage } from "../../src/index.js";

/** Opens the JSONL storage at `path` (the shape the shared crash suite loads in its child process). */
export async function open(path: string): Promise<Storage> {
  return openJsonlStorage(path);
}

/** The same with `fsync: true`. */
export async function openWithFsync(path: string): Promise<Storage> {
  return openJsonlStorage(path, { fsync: true });
}
