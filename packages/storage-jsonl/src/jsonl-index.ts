import { MemoryIndex, type IndexedDocument } from "@durably/core/storage";

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
 */
export class JsonlIndex extends MemoryIndex<RevisionRef> {
  /** The high-water mark the newest marker on disk carries. */
  persistedHighWater = 1;
  /** Confirmed size and line count of every sidecar file that exists. */
  readonly files = new Map<string, FileExtent>();
}
