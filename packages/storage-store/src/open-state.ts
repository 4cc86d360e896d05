import { StorageCorrupted, StorageVersionError } from "@durably/core";
import { CHAIN_START, decodeCounters, verifyChain, type Counters } from "./commit-chain.js";
import { decode } from "./codec.js";
import { unframe } from "./framing.js";
import type { KeyValueStore } from "./key-value-store.js";
import { K } from "./keys.js";

/**
 * The key layout and value framing version this code writes and reads
 * (`m/format`). Format 1 had no value checksums and no commit chain.
 */
export const STORE_FORMAT = 2;

/** What `StoreStorage.open` learns from the store before it is ready. */
export interface StoredState {
  counters: Counters;
  /** False for an empty store: the first write also writes `m/format`. */
  formatWritten: boolean;
}

/**
 * Reads `m/format` and `m/counters` and verifies the commit chain since the
 * last verified open. Changes nothing: every damage found is reported as
 * `StorageCorrupted` naming the key and, for the chain, the seq. A store
 * refused for what it is (another format, not a Durably store) says what
 * opening it changed on disk (`KeyValueStore.openEffects`), or that nothing
 * was.
 */
export async function readStoredState(store: KeyValueStore): Promise<StoredState> {
  const changed = () => store.openEffects?.() ?? "Nothing was changed.";
  const format = await store.get(K.format);
  if (format === undefined) {
    for await (const [key] of store.range({ limit: 1 }))
      throw new StorageCorrupted(
        `the store is not empty but has no ${K.format} key (first key ${key}): not a Durably store. ${changed()}`,
        { key },
      );
    return {
      counters: { seq: 0, ids: 0, verified: 0, link: CHAIN_START },
      formatWritten: false,
    };
  }
  if (format === "1")
    throw new StorageVersionError(
      `${K.format} is 1: this store was written before value checksums and the commit chain, and this version reads format ${STORE_FORMAT} only. ` +
        `${changed()} Read it with @durably/storage-store 0.x from before format ${STORE_FORMAT}, or start a new store.`,
    );
  const version = decode(K.format, unframe(K.format, format));
  if (typeof version === "number" && Number.isSafeInteger(version) && version > STORE_FORMAT)
    throw new StorageVersionError(
      `${K.format} is ${version}; this code reads format ${STORE_FORMAT}. ${changed()}`,
    );
  if (version !== STORE_FORMAT)
    throw new StorageCorrupted(`key ${K.format}: unknown format ${JSON.stringify(version)}`, {
      key: K.format,
    });
  const raw = await store.get(K.counters);
  if (raw === undefined)
    throw new StorageCorrupted(`key ${K.counters} is missing`, { key: K.counters });
  const counters = decodeCounters(unframe(K.counters, raw));
  await verifyChain(store, counters);
  return { counters, formatWritten: true };
}
