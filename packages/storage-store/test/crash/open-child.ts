// The module the shared crash suite (registerCrashConformance) imports in its child process.
import type { Storage } from "@durably/core";
import { ClassicLevel } from "classic-level";
import { StoreStorage, levelStore } from "../../src/index.js";

/** Opens StoreStorage on classic-level (LevelDB) at `path`. */
export async function open(path: string): Promise<Storage> {
  return StoreStorage.open(levelStore(new ClassicLevel(path)));
}
