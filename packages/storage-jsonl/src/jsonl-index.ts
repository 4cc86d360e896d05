import { StorageCorrupted } from "@durably/core";
import { MemoryIndex, type IndexedDocument, type StoredEntry } from "@durably/core/storage";

/** Where one stored revision of a document sits in its sidecar file. */
export interface RevisionRef {
  seq: number;
  base: boolean;
  offset: number;
  length: number;
  /** 1-based line number in the file as it is now. */
  line: number;
}

/** Where a write's sidecar record was appended. */
export interface Placement {
  offset: number;
  length: number;
  line: number;
}

export interface FileExtent {
  size: number;
  lines: number;
}

/** A document as the JSONL index holds it: history stays in its sidecar file, only positions here. */
export type JsonlDocument = IndexedDocument<RevisionRef>;

/**
 * Everything the open storage knows, rebuilt from the files on open: the
 * shared in-memory index (records, current document values, revision
 * positions) plus what the files need.
 *
 * The entries of a snapshot are kept as the text of their snapshot lines
 * (`putStoredEntry`), each checked whole at open (checksum, JSON, shape),
 * and parsed again on their first read (`reviveEntry`): the same checked
 * text gives the same entry.
 */
export class JsonlIndex extends MemoryIndex<RevisionRef> {
  /** The high-water mark the newest marker on disk carries. */
  persistedHighWater = 1;
  /** Confirmed size and line count of every sidecar file that exists. */
  readonly files = new Map<string, FileExtent>();
  /** The snapshot the stored entries were loaded from (from the storage directory), for messages. */
  entriesFrom = "";

  protected override reviveEntry(id: number, stored: string): StoredEntry {
    let line: { seq: number; value: StoredEntry["entry"] } | undefined;
    try {
      line = JSON.parse(stored) as typeof line;
    } catch {
      // Unreachable: the text parsed at open, and a string does not change.
    }
    if (line?.value?.id !== id)
      throw new StorageCorrupted(
        `${this.entriesFrom}: the line of entry ${id}, checked at open, no longer gives that entry`,
        { file: this.entriesFrom },
      );
    return { entry: line.value, commitSeq: line.seq };
  }
}
