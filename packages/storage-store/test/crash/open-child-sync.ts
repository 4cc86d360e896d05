// The crash suite's child module for StoreStorage on classic-level with every commit synced.
import type { Storage } from "@durably/core";
import { ClassicLevel } from "classic-level";
import { StoreStorage, levelStore } from "../../src/index.js";

/** Opens StoreStorage on classic-level at `path`, each commit's write synced to disk (`sync: true`). */
export async function open(path: string): Promise<Storage> {
  return StoreStorage.open(levelStore(new ClassicLevel(path), { sync: true }));
}
