import type { Storage } from "@durably/core";
import { nodeFileSystem, openJsonlStorage } from "../../src/index.js";
import { fsyncErrorIgnoringFileSystem } from "./fsync-error-ignoring-file-system.js";

/** A deliberately broken JSONL storage for the syscall-fault suite's self-test: failed fsyncs are ignored. */
export async function open(path: string): Promise<Storage> {
  return openJsonlStorage(path, { fs: fsyncErrorIgnoringFileSystem(nodeFileSystem), fsync: true });
}
