import { StorageCorrupted } from "@durably/core";
import { MemoryIndex, type IndexedDocument, type StoredEntry } from "@durably/core/storage";
import { LineError } from "./line-format.js";
import { checkGlance, decodeSnapshotLine, glanceEntryLine } from "./snapshot-format.js";

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
 * (`putStoredEntry`) and decoded on their first read (`reviveEntry`). Open
 * checks every line's checksum; an entry line laid out as this version
 * writes it is indexed from its text (`glanceEntryLine`) and decoded whole
 * only on that read, which checks what a decode at open would have
 * (JSON, members, shape) and that it gives what open indexed; any other
 * entry line is decoded whole at open already. A line that fails on its
 * read is `StorageCorrupted` naming the snapshot file and the line.
 */
export class JsonlIndex extends MemoryIndex<RevisionRef> {
  /** The high-water mark the newest marker on disk carries. */
  persistedHighWater = 1;
  /** Confirmed size and line count of every sidecar file that exists. */
  readonly files = new Map<string, FileExtent>();
  /** The snapshot the stored entries were loaded from (from the storage directory), for messages. */
  entriesFrom = "";
  /** The ids of the stored entries in the order loaded, and their lines in `entriesFrom`, for messages. */
  private readonly lineIds: number[] = [];
  private readonly lineNumbers: number[] = [];

  /** Stores an entry as the text of snapshot line `line` (see the class). */
  putSnapshotEntry(id: number, conversationId: number, head: boolean, text: string, line: number) {
    this.putStoredEntry(id, conversationId, head, text);
    this.lineIds.push(id);
    this.lineNumbers.push(line);
  }

  protected override reviveEntry(id: number, stored: string): StoredEntry {
    return this.decodeEntry(id, stored);
  }

  /**
   * Decodes a stored entry's line whole and checks it (as `reviveEntry`),
   * without keeping it: a compaction checks this way the lines it copies.
   */
  decodeEntry(id: number, stored: string): StoredEntry {
    try {
      const line = decodeSnapshotLine(stored);
      if (line.type !== "entry") throw new LineError(`a ${line.type} line where entry ${id} was`);
      const glance = glanceEntryLine(stored);
      const problem =
        glance === undefined
          ? line.value.id === id
            ? undefined
            : `the line gives entry ${line.value.id}, not ${id}`
          : checkGlance(line, glance);
      if (problem !== undefined) throw new LineError(problem);
      return { entry: line.value, commitSeq: line.seq };
    } catch (error) {
      if (!(error instanceof LineError)) throw error;
      // The last line stored under the id is the one kept.
      const at = this.lineIds.lastIndexOf(id);
      const line = at < 0 ? undefined : this.lineNumbers[at];
      const where = line === undefined ? this.entriesFrom : `${this.entriesFrom} line ${line}`;
      throw new StorageCorrupted(
        `${where}: ${error.message}`,
        line === undefined ? { file: this.entriesFrom } : { file: this.entriesFrom, line },
        { cause: error },
      );
    }
  }
}
