import {
  StorageCorrupted,
  type ConversationRecord,
  type DocumentRecord,
  type SubmissionRecord,
  type TaskRecord,
} from "@durably/core";
import type { StoredEntry } from "@durably/core/storage";
import type { AppendFile, FileSystem } from "./file-system.js";
import type { FileExtent, JsonlIndex, RevisionRef } from "./jsonl-index.js";
import { checkedRevision } from "./document-history.js";
import { splitLines } from "./line-cursor.js";
import { documentFile } from "./line-format.js";
import { Pacer } from "./pacer.js";
import {
  encodeSnapshotHeader,
  encodeSnapshotLine,
  SNAPSHOT_FILE,
  type SnapshotLine,
} from "./snapshot-format.js";

/** Bytes gathered before each append while a snapshot is written: small, so commits interleave. */
const WRITE_CHUNK = 128 * 1024;

/**
 * How long the writer rests after each chunk, per unit of time the chunk
 * took: 3 leaves commits at least three quarters of the thread while a
 * compaction runs (it then takes about four times as long).
 */
const REST_PER_BUSY = 3;

/**
 * The index as it stood at one seq, taken between two commit calls:
 * references to its (never mutated, only replaced) records and copies of
 * the mutable parts, so commits may go on while it is written out.
 */
export interface Capture {
  seq: number;
  ids: number;
  conversations: ConversationRecord[];
  /** An entry, or the snapshot line it was read from at open and never read since (see `JsonlIndex`). */
  entries: (StoredEntry | string)[];
  /** The ids of `entries`, in the same order. */
  entryIds: number[];
  /** Decodes and checks a line of `entries` (`JsonlIndex.decodeEntry`). */
  checkEntry: (id: number, stored: string) => void;
  tasks: TaskRecord[];
  submissions: SubmissionRecord[];
  documents: { record: DocumentRecord; currentOnly: boolean; revisions: RevisionRef[] }[];
  /** Sidecar extents at the seq. */
  files: Map<string, FileExtent>;
}

function rows<T>(table: { ids(): readonly number[]; get(id: number): T | undefined }): T[] {
  return table.ids().map((id) => table.get(id) as T);
}

export function capture(state: JsonlIndex): Capture {
  return {
    seq: state.lastSeq,
    ids: Math.max(state.highWater, state.persistedHighWater),
    conversations: rows(state.conversations),
    // Entries never read since open stay the lines they were loaded from (checked as written).
    entries: state.entries.ids().map((id) => state.entries.stored(id) as StoredEntry | string),
    entryIds: [...state.entries.ids()],
    checkEntry: (id, stored) => void state.decodeEntry(id, stored),
    tasks: rows(state.tasks),
    submissions: rows(state.submissions),
    documents: [...state.documents.values()].map((doc) => ({
      record: doc.record,
      currentOnly: doc.currentOnly,
      revisions: doc.revisions.map((r) => ({ ...r })),
    })),
    files: new Map([...state.files].map(([file, extent]) => [file, { ...extent }])),
  };
}

/** Where a copied document file starts in the old one: new positions are old ones minus these. */
export interface CopiedFile {
  cut: number;
  cutLines: number;
  /** Bytes and lines copied (the old file's extent at the seq, minus the cut). */
  size: number;
  lines: number;
}

/** Buffers lines and appends them a chunk at a time, yielding to commits in between. */
class ChunkedWriter {
  private text = "";
  bytes = 0;
  constructor(
    private readonly out: AppendFile,
    private readonly pacer: Pacer,
  ) {}
  async add(line: string): Promise<void> {
    this.text += line;
    if (this.text.length >= WRITE_CHUNK) await this.drain();
  }
  async drain(): Promise<void> {
    if (this.text.length === 0) return;
    const data = Buffer.from(this.text);
    this.text = "";
    this.bytes += data.length;
    await this.out.append(data);
    await this.pacer.rest();
  }
}

/**
 * Copies a document's kept revisions (contiguous at the end of its file up
 * to the seq) into the new generation, a range at a time, checking each
 * line (checksum, owner, seq) as it goes; returns the refs the snapshot
 * lists for them.
 */
async function copyDocument(
  fs: FileSystem,
  from: string,
  to: string,
  doc: Capture["documents"][number],
  extent: FileExtent,
  pacer: Pacer,
): Promise<{ refs: [number, number][]; copied: CopiedFile }> {
  const id = doc.record.id;
  const file = documentFile(id);
  const first = doc.revisions[0] as RevisionRef;
  const refs: [number, number][] = [];
  const out = await fs.openAppend(`${to}/${file}`);
  try {
    let at = 0;
    while (at < doc.revisions.length) {
      const start = doc.revisions[at] as RevisionRef;
      let end = at;
      while (
        end + 1 < doc.revisions.length &&
        (doc.revisions[end + 1] as RevisionRef).offset - start.offset < WRITE_CHUNK
      )
        end++;
      const last = doc.revisions[end] as RevisionRef;
      const length = last.offset + last.length - start.offset;
      const bytes = await fs.read(`${from}/${file}`, { offset: start.offset, length });
      const { lines } = splitLines(bytes ?? new Uint8Array(), start.offset, start.line);
      for (let i = at; i <= end; i++) {
        const revision = checkedRevision(file, id, doc.revisions[i] as RevisionRef, lines[i - at]);
        refs.push([revision.seq, revision.ordinal]);
      }
      await out.append(bytes as Uint8Array);
      await pacer.rest();
      at = end + 1;
    }
    await out.flush();
  } finally {
    await out.close();
  }
  const last = doc.revisions[doc.revisions.length - 1] as RevisionRef;
  // Revisions run to the end of the file as it stood at the seq (nothing else is kept there).
  if (last.offset + last.length !== extent.size)
    throw new StorageCorrupted(
      `${file}: its kept revisions end at byte ${last.offset + last.length}, but the file held ${extent.size} bytes at seq ${doc.revisions[0]?.seq}`,
      { file },
    );
  return {
    refs,
    copied: {
      cut: first.offset,
      cutLines: first.line - 1,
      size: extent.size - first.offset,
      lines: extent.lines - (first.line - 1),
    },
  };
}

/**
 * Writes a new generation's files into `to` (an existing, empty directory)
 * from a capture: every document's kept revisions copied from `from`, the
 * snapshot of the tables, and an empty `main.jsonl`, each flushed (the
 * directory too). Returns where the copied files start in the old ones.
 */
export async function writeGeneration(
  fs: FileSystem,
  from: string,
  to: string,
  generation: number,
  taken: Capture,
): Promise<{ copied: Map<string, CopiedFile>; snapshotBytes: number }> {
  const copied = new Map<string, CopiedFile>();
  const snapshot = await fs.openAppend(`${to}/${SNAPSHOT_FILE}`);
  let snapshotBytes: number;
  try {
    const pacer = new Pacer(REST_PER_BUSY);
    const out = new ChunkedWriter(snapshot, pacer);
    let lines = 1;
    const add = (line: SnapshotLine) => {
      lines++;
      return out.add(encodeSnapshotLine(line));
    };
    await out.add(encodeSnapshotHeader({ generation, seq: taken.seq, ids: taken.ids }));
    for (const value of taken.conversations) await add({ type: "conversation", value });
    for (let i = 0; i < taken.entries.length; i++) {
      const row = taken.entries[i] as StoredEntry | string;
      if (typeof row === "string") {
        // A line of an earlier snapshot of this format: checked whole, then copied as it is.
        taken.checkEntry(taken.entryIds[i] as number, row);
        lines++;
        await out.add(`${row}\n`);
      } else await add({ type: "entry", seq: row.commitSeq, value: row.entry });
    }
    for (const value of taken.tasks) await add({ type: "task", value });
    for (const value of taken.submissions) await add({ type: "submission", value });
    for (const doc of taken.documents) {
      const file = documentFile(doc.record.id);
      const extent = taken.files.get(file);
      let refs: [number, number][] = [];
      if (doc.revisions.length > 0 && extent !== undefined) {
        const done = await copyDocument(fs, from, to, doc, extent, pacer);
        refs = done.refs;
        copied.set(file, done.copied);
      }
      await add({ type: "document", record: doc.record, currentOnly: doc.currentOnly, refs });
    }
    await add({ type: "end", lines: lines + 1 });
    await out.drain();
    snapshotBytes = out.bytes;
    await snapshot.flush();
  } finally {
    await snapshot.close();
  }
  const main = await fs.openAppend(`${to}/main.jsonl`);
  await main.close();
  return { copied, snapshotBytes };
}
