import type { Storage } from "@durably/core";
import { nodeFileSystem, openJsonlStorage } from "../../src/index.js";
import { lateWriteFileSystem } from "./late-write-file-system.js";

/** A deliberately broken JSONL storage for the crash suite's self-test: its disk acknowledges appends early. */
export async function open(path: string): Promise<Storage> {
  return openJsonlStorage(path, { fs: lateWriteFileSystem(nodeFileSystem), fsync: true });
}
