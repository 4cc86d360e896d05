import type { ConversationRecord, EntryRecord, SubmissionRecord, TaskRecord } from "@durably/core";
import type { DocumentState } from "./documents.js";
import { Table } from "./table.js";

export interface StoredEntry {
  entry: EntryRecord;
  commitSeq: number;
}

/** Everything a MemoryStorage holds. Values here are private copies, never handed out. */
export class MemoryState {
  /** Seq of the newest stored batch (0 before the first). */
  lastSeq = 0;
  /** Highest id minted or committed; the root id 1 is reserved from the start. */
  highWater = 1;
  readonly conversations = new Table<ConversationRecord>(() => undefined);
  readonly entries = new Table<StoredEntry>((row) => row.entry.conversationId);
  /** Per conversation, ascending ids of its entries that carry a `head` field. */
  readonly heads = new Map<number, number[]>();
  readonly tasks = new Table<TaskRecord>((row) => row.conversationId);
  readonly submissions = new Table<SubmissionRecord>((row) => row.conversationId);
  /** `requestKey(conversationId, requestId)` to ascending submission ids. */
  readonly requests = new Map<string, number[]>();
  readonly documents = new Map<number, DocumentState>();
  /** Address key to every incarnation ever created there, ascending. */
  readonly addresses = new Map<string, number[]>();
  /** Scope key to the ids of every incarnation in that scope, ascending. */
  readonly scopes = new Map<string, number[]>();
}

export function requestKey(conversationId: number, requestId: string): string {
  return `${conversationId}:${requestId}`;
}
