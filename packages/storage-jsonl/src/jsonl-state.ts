import {
  scopeKey,
  type ConversationRecord,
  type DocumentAddress,
  type DocumentRecord,
  type EntryRecord,
  type Json,
  type SubmissionRecord,
  type TaskRecord,
} from "@durably/core";
import { Table } from "./table.js";

/** Where one stored revision of a document sits in its sidecar file. */
export interface RevisionRef {
  seq: number;
  base: boolean;
  offset: number;
  length: number;
  /** 1-based line number in the file as it is now. */
  line: number;
}

/**
 * One document incarnation as the index holds it: the record, the current
 * value (the head), and the file positions of the revisions a read may
 * still need. History is read back from the sidecar file, never kept here.
 */
export interface DocumentState {
  record: DocumentRecord;
  /** Session and task scope, and conversation scope unless `history: "rewindable"`. */
  currentOnly: boolean;
  file: string;
  /** The current value; `undefined` once retired (and while replaying reclaimed history on open). */
  current: { version: number; value: Json } | undefined;
  deltasSinceBase: number;
  newestBaseSeq: number;
  /** Rewindable: every revision. Current-only: the newest base and its tail. */
  revisions: RevisionRef[];
}

export interface FileExtent {
  size: number;
  lines: number;
}

export interface StoredEntry {
  entry: EntryRecord;
  commitSeq: number;
}

/** Everything the open storage knows, rebuilt from the files on open. Values are private copies. */
export class JsonlState {
  /** Seq of the newest stored batch (0 before the first). */
  lastSeq = 0;
  /** Highest id minted or committed; the root id 1 is reserved from the start. */
  highWater = 1;
  /** The high-water mark the newest marker on disk carries. */
  persistedHighWater = 1;
  readonly conversations = new Table<ConversationRecord>(() => undefined);
  readonly entries = new Table<StoredEntry>((row) => row.entry.conversationId);
  /** Per conversation, ascending ids of its entries that carry a `head` field. */
  readonly heads = new Map<number, number[]>();
  readonly tasks = new Table<TaskRecord>((row) => row.conversationId);
  readonly submissions = new Table<SubmissionRecord>((row) => row.conversationId);
  /** `requestKey(conversationId, requestId)` to ascending submission ids. */
  readonly requests = new Map<string, number[]>();
  readonly documents = new Map<number, DocumentState>();
  /** Address key to every incarnation created there, ascending. */
  readonly addresses = new Map<string, number[]>();
  /** Scope key to every incarnation in that scope, ascending. */
  readonly scopes = new Map<string, number[]>();
  /** Confirmed size and line count of every sidecar file that exists. */
  readonly files = new Map<string, FileExtent>();
}

export function requestKey(conversationId: number, requestId: string): string {
  return `${conversationId}:${requestId}`;
}

export function isCurrentOnly(record: Pick<DocumentRecord, "scope" | "history">): boolean {
  return record.scope.kind !== "conversation" || record.history !== "rewindable";
}

/** The string identifying `(kind, scope, key)`; an absent key differs from every string key. */
export function addressKey(address: DocumentAddress): string {
  return JSON.stringify([address.kind, scopeKey(address.scope), address.key ?? null]);
}

export function isLive(record: DocumentRecord, at: number | "current"): boolean {
  if (at === "current") return record.retiredAt === undefined;
  return record.createdAt <= at && (record.retiredAt === undefined || at < record.retiredAt);
}

/** The live incarnation at an address key, if any. */
export function liveAt(state: JsonlState, address: string): number | undefined {
  const ids = state.addresses.get(address);
  if (ids === undefined) return undefined;
  for (let i = ids.length - 1; i >= 0; i--) {
    const doc = state.documents.get(ids[i] as number);
    if (doc !== undefined && doc.record.retiredAt === undefined) return doc.record.id;
  }
  return undefined;
}
