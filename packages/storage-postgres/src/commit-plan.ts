import { copyJson, type StorageWrite } from "@durably/core";
import { checkBatchShape, highestId, type BatchProblem } from "@durably/core/storage";

/** One batch copied out of the caller's objects and shape-checked, or the reason it cannot be stored. */
export type CheckedBatch =
  { writes: StorageWrite[]; highestId: number } | { problem: BatchProblem };

/**
 * Copies and validates one batch (strict JSON, write shapes) before the
 * first await of `commit`, so the caller may reuse its objects at once and
 * nothing malformed ever reaches SQL.
 */
export function checkBatch(input: unknown, batchIndex: number): CheckedBatch {
  if (!Array.isArray(input))
    return {
      problem: {
        writeIndex: 0,
        reason: "invalid-write",
        message: `batches[${batchIndex}] is not an array of writes`,
      },
    };
  const writes = new Array<StorageWrite>(input.length);
  for (let i = 0; i < input.length; i++) {
    try {
      writes[i] = copyJson(input[i], `batches[${batchIndex}][${i}]`) as unknown as StorageWrite;
    } catch (error) {
      if (!(error instanceof TypeError)) throw error;
      return { problem: { writeIndex: i, reason: "invalid-write", message: error.message } };
    }
  }
  const shape = checkBatchShape(writes);
  if (shape !== undefined) return { problem: shape };
  return { writes, highestId: highestId(writes) };
}
