import { copyJson } from "../domain/json.js";
import { isSealedBatches } from "../session/sealed-batches.js";
import { checkBatchShape, type BatchProblem } from "./batch-checks.js";
import type { Batch, StorageWrite } from "./port.js";
import { refusals } from "./refusals.js";

/** The batches of a call copied out of the caller's objects, up to the first one that cannot be stored. */
export interface DetachedBatches {
  batches: Batch[];
  /** Why batch `batches.length` is refused, if one is. */
  invalid?: BatchProblem;
}

/**
 * Copies every batch (checking strict JSON and the write shapes on the way),
 * so the caller may mutate what it passed as soon as `commit` returns and
 * nothing the backend keeps is shared with it. Stops at the first batch that
 * cannot be stored: it will be refused and later ones are never attempted.
 *
 * The Session's own batches (`isSealedBatches`, true only while the
 * synchronous part of its `commit` call runs, so call this before the first
 * await) hold deeply frozen values it checked and copied already: they are
 * kept as they are, with only the write shapes checked.
 */
export function detachBatches(batches: readonly unknown[]): DetachedBatches {
  const sealed = isSealedBatches(batches);
  const copies: Batch[] = [];
  for (let b = 0; b < batches.length; b++) {
    const batch = batches[b];
    if (!Array.isArray(batch)) return { batches: copies, invalid: refusals.notABatch(0) };
    if (sealed) {
      const shape = checkBatchShape(batch as Batch);
      if (shape !== undefined) return { batches: copies, invalid: shape };
      copies.push(batch as Batch);
      continue;
    }
    const copy = new Array<StorageWrite>(batch.length);
    for (let w = 0; w < batch.length; w++) {
      const where = `batches[${b}][${w}]`;
      try {
        copy[w] = copyJson(batch[w], where) as unknown as StorageWrite;
      } catch (error) {
        if (error instanceof TypeError)
          return { batches: copies, invalid: refusals.notJson(w, error.message) };
        if (error instanceof RangeError)
          return { batches: copies, invalid: refusals.tooLarge(w, where, error.message) };
        throw error;
      }
    }
    const shape = checkBatchShape(copy);
    if (shape !== undefined) return { batches: copies, invalid: shape };
    copies.push(copy);
  }
  return { batches: copies };
}
