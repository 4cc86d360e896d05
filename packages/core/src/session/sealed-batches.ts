import type { Batch } from "../storage/port.js";

/**
 * The batches of the `storage.commit` call the Session is making, while the
 * synchronous part of that call runs; `undefined` otherwise.
 */
let sealed: readonly Batch[] | undefined;

/**
 * True when `batches` is the array a Session is passing to `storage.commit`
 * right now, and the call's synchronous part is running: every write in it
 * was built by the Session from values it already checked and copied when
 * they were written into the transaction. Every value the writes carry
 * (records, document values, ops) is strict JSON within the nesting limit
 * and deeply frozen, so an adapter may keep or serialise it without copying
 * or checking it again; the adapter's own refusal rules (ids, versions,
 * retirements) still apply. Nothing outside the module can make this true
 * for a batch of its own, and it is false once the call returned its
 * promise: decide before the first await.
 */
export function isSealedBatches(batches: unknown): boolean {
  return batches !== undefined && batches === sealed;
}

/** @internal Marks `batches` sealed for the `storage.commit` call about to be made; returns what to restore. */
export function beginSealedCall(batches: readonly Batch[]): readonly Batch[] | undefined {
  const previous = sealed;
  sealed = batches;
  return previous;
}

/** @internal Ends the mark once the call returned (its synchronous part is over). */
export function endSealedCall(previous: readonly Batch[] | undefined): void {
  sealed = previous;
}
