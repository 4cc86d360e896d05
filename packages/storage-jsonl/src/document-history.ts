import { StorageCorrupted } from "@durably/core";
import { historyAt, type StoredRevision } from "@durably/core/storage";
import type { FileSystem } from "./file-system.js";
import type { JsonlDocument, RevisionRef } from "./jsonl-index.js";
import { splitLines } from "./line-cursor.js";
import { decodeRecord, documentFile, LineError } from "./line-format.js";

/**
 * The revisions a read of `doc` at seq `at` needs, read back from its
 * sidecar file: the newest base at or before `at` and its deltas up to `at`,
 * one contiguous byte range. Each record is checked to be the one the index
 * placed there.
 */
export async function readHistory(
  fs: FileSystem,
  directory: string,
  doc: JsonlDocument,
  at: number,
): Promise<{ revisions: StoredRevision[]; where: string }> {
  const file = documentFile(doc.record.id);
  const wanted = historyAt(doc.revisions, at, (ref) => ref.base);
  return {
    revisions: await readRevisions(fs, directory, file, doc.record.id, wanted),
    where: file,
  };
}

/** Reads `wanted` (a base and its deltas, contiguous in the file). */
async function readRevisions(
  fs: FileSystem,
  directory: string,
  file: string,
  id: number,
  wanted: readonly RevisionRef[],
): Promise<StoredRevision[]> {
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
    const revision = checkedRevision(file, id, wanted[i] as RevisionRef, lines[i]);
    revisions.push({ seq: revision.seq, content: revision.content });
  }
  return revisions;
}

/**
 * The revision record of document `id` the index placed at `ref`, decoded
 * from `line` (the line found at that place): `StorageCorrupted` naming the
 * file and line when the line is not there, does not decode, or holds
 * another record.
 */
export function checkedRevision(
  file: string,
  id: number,
  ref: RevisionRef,
  line: { offset: number; text: string } | undefined,
): { seq: number; ordinal: number; content: StoredRevision["content"] } {
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
  return { seq: record.seq, ordinal: record.ordinal, content: record.payload.content };
}
