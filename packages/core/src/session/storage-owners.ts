import { StorageLocked } from "../domain/errors.js";
import type { Storage } from "../storage/port.js";

/**
 * The storage objects an open Session owns. Each Session keeps its own
 * document cache and counters over its storage, so a second Session over
 * the same object would read stale values and store changes computed
 * against them (two graphs' savers, or a saver beside a harness, each
 * handed the storage). A storage's own lock cannot see this: it is one
 * open storage. So a second open is refused until the first closes.
 */
const owned = new WeakSet<Storage>();

/** Takes `storage` for a new Session, or throws `StorageLocked` when an open Session has it. */
export function takeStorage(storage: Storage): void {
  if (owned.has(storage))
    throw new StorageLocked(
      "this storage is already open in a Session: share that Session (or the Harness over it) instead of opening a second one over the same storage, which would read stale state and overwrite the first one's changes",
      { holder: "a Session in this process" },
    );
  owned.add(storage);
}

/** Gives `storage` back once its Session has closed it (or failed to open). */
export function releaseStorage(storage: Storage): void {
  owned.delete(storage);
}
