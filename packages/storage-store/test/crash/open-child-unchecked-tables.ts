// The crash suite's child module for StoreStorage on classic-level without the table checks at open.
import type { Storage } from "@durably/core";
import { ClassicLevel } from "classic-level";
import { StoreStorage, levelStore } from "../../src/index.js";

/** Opens StoreStorage on classic-level at `path` with `checkTables: false`. */
export async function open(path: string): Promise<Storage> {
  return StoreStorage.open(levelStore(new ClassicLevel(path), { checkTables: false }));
}
