import {
  historyUnavailable,
  materializeRevisions,
  StorageCorrupted,
  StorageRequestError,
  type MaterializedDocument,
  type StoredRevision,
} from "@durably/core";
import type { FileSystem } from "./file-system.js";
import type { DocumentState, RevisionRef } from "./jsonl-state.js";
import { splitLines } from "./line-cursor.js";
import { decodeRecord, LineError } from "./line-format.js";

/** Number of revisions with `seq <= at` (revisions are seq-ascending). */
function countAtOrBefore(revisions: readonly RevisionRef[], at: number): number {
  let lo = 0;
  let hi = revisions.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((revisions[mid] as RevisionRef).seq <= at) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * The value of a document (known to be live at `at`) as of `at`. The current
 * value comes from memory; history is read back from the sidecar file: the
 * newest base at or before `at` and its deltas, one contiguous byte range.
 * The result shares structure with the index; callers copy it.
 */
export async function readDocumentAt(
  fs: FileSystem,
  directory: string,
  doc: DocumentState,
  at: number | "current",
): Promise<MaterializedDocument> {
  const id = doc.record.id;
  if (doc.currentOnly && at !== "current") {
    if (doc.record.retiredAt !== undefined)
      throw new StorageRequestError(
        "history-unavailable",
        `document ${id} keeps only its current value and was retired at seq ${doc.record.retiredAt}: seq ${at} is no longer readable`,
      );
    if (at < doc.newestBaseSeq) throw historyUnavailable(id, at, doc.newestBaseSeq);
  }
  const end = at === "current" ? doc.revisions.length : countAtOrBefore(doc.revisions, at);
  if (end === doc.revisions.length && doc.current !== undefined)
    return {
      record: doc.record,
      version: doc.current.version,
      value: doc.current.value,
      deltasSinceBase: doc.deltasSinceBase,
    };
  let start = end - 1;
  while (start > 0 && !(doc.revisions[start] as RevisionRef).base) start--;
  const wanted = doc.revisions.slice(Math.max(start, 0), end);
  return { record: doc.record, ...(await readRevisions(fs, directory, doc.file, id, wanted)) };
}

/** Reads and materialises `wanted` (a base and its deltas, contiguous in the file). */
async function readRevisions(
  fs: FileSystem,
  directory: string,
  file: string,
  id: number,
  wanted: readonly RevisionRef[],
): Promise<{ version: number; value: MaterializedDocument["value"]; deltasSinceBase: number }> {
  const first = wanted[0];
  const last = wanted[wanted.length - 1];
  if (first === undefined || last === undefined)
    throw new StorageCorrupted(`document ${id}: no revision on disk to read (${file})`, {
      file,
      documentId: id,
    });
  const length = last.offset + last.length - first.offset;
  const bytes = await fs.read(`${directory}/${file}`, { offset: first.offset, length });
  if (bytes === undefined || bytes.length < length)
    throw new StorageCorrupted(
      `${file} line ${first.line}: the file ends before the revisions of document ${id} it must hold`,
      {
        file,
        line: first.line,
        documentId: id,
      },
    );
  const { lines } = splitLines(bytes, first.offset, first.line);
  const revisions: StoredRevision[] = [];
  for (let i = 0; i < wanted.length; i++) {
    const ref = wanted[i] as RevisionRef;
    const line = lines[i];
    const where = { file, line: ref.line, documentId: id, seq: ref.seq };
    if (line === undefined || line.offset !== ref.offset)
      throw new StorageCorrupted(
        `${file} line ${ref.line}: the revision at seq ${ref.seq} is not where it was written`,
        where,
      );
    let record;
    try {
      record = decodeRecord(line.text);
    } catch (error) {
      if (!(error instanceof LineError)) throw error;
      throw new StorageCorrupted(`${file} line ${ref.line}: ${error.message}`, where, {
        cause: error,
      });
    }
    if (record.seq !== ref.seq || record.payload.type !== "document" || record.payload.id !== id)
      throw new StorageCorrupted(
        `${file} line ${ref.line}: expected document ${id} at seq ${ref.seq}`,
        where,
      );
    revisions.push({ seq: record.seq, content: record.payload.content });
  }
  return materializeRevisions(id, revisions, file);
}
