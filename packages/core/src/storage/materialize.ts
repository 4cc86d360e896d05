import { InvalidOp, StorageCorrupted, StorageRequestError } from "../domain/errors.js";
import type { Json } from "../domain/json.js";
import { applyOps } from "../domain/ops.js";
import type { DocumentContent } from "./port.js";

export interface StoredRevision {
  seq: number;
  content: DocumentContent;
}

/**
 * Materialises a document from its revisions in seq order, starting at a
 * base: the base value plus every delta after it. A missing base, a broken
 * op or a version change inside the delta tail is corruption, reported with
 * `where` (a file and line, a table, a key) so the user can find it.
 */
export function materializeRevisions(
  documentId: number,
  revisions: readonly StoredRevision[],
  where = "",
): { version: number; value: Json; deltasSinceBase: number } {
  const place = where ? ` (${where})` : "";
  const first = revisions[0];
  if (first === undefined || first.content.kind !== "base")
    throw new StorageCorrupted(
      `document ${documentId}: no base revision before its deltas${place}`,
      {
        documentId,
        ...(first ? { seq: first.seq } : {}),
      },
    );
  const version = first.content.version;
  let value: Json = first.content.value;
  for (let i = 1; i < revisions.length; i++) {
    const revision = revisions[i] as StoredRevision;
    const content = revision.content;
    if (content.kind !== "delta")
      throw new StorageCorrupted(
        `document ${documentId}: a base inside the delta tail at seq ${revision.seq}${place}`,
        {
          documentId,
          seq: revision.seq,
        },
      );
    if (content.version !== version)
      throw new StorageCorrupted(
        `document ${documentId}: delta at seq ${revision.seq} is version ${content.version}, its base is version ${version}${place}`,
        { documentId, seq: revision.seq },
      );
    try {
      value = applyOps(value, content.ops);
    } catch (error) {
      if (!(error instanceof InvalidOp)) throw error;
      throw new StorageCorrupted(
        `document ${documentId}: delta at seq ${revision.seq} does not apply: ${error.message}${place}`,
        { documentId, seq: revision.seq },
        { cause: error },
      );
    }
  }
  return { version, value, deltasSinceBase: revisions.length - 1 };
}

/** The rejection for a historical read of a current-only document before its newest base. */
export function historyUnavailable(
  documentId: number,
  at: number,
  newestBase: number,
): StorageRequestError {
  return new StorageRequestError(
    "history-unavailable",
    `document ${documentId} keeps only its current value: seq ${at} is before its newest base at seq ${newestBase}`,
  );
}

/** The rejection for a historical read of a current-only document that was retired (its history is gone). */
export function historyRetired(
  documentId: number,
  at: number,
  retiredAt: number,
): StorageRequestError {
  return new StorageRequestError(
    "history-unavailable",
    `document ${documentId} keeps only its current value and was retired at seq ${retiredAt}: seq ${at} is no longer readable`,
  );
}
