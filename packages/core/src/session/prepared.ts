import type { DocumentId, Seq } from "../domain/ids.js";
import type { Op } from "../domain/ops.js";
import type {
  ConversationRecord,
  EntryRecord,
  NewDocumentRecord,
  SubmissionRecord,
  TaskRecord,
} from "../domain/records.js";
import type { DocumentAddress, StorageWrite } from "../storage/port.js";
import type { DocValue } from "./tokens.js";

/** A live document incarnation as the session knows it (stored or prepared). */
export interface DocIncarnation {
  readonly id: DocumentId;
  readonly record: NewDocumentRecord;
  /** The seq of the creating commit, once stored. */
  readonly createdAt: Seq | undefined;
  readonly version: number;
  /** Frozen; shared with readers and watchers. */
  readonly value: DocValue;
  readonly deltasSinceBase: number;
}

/** `null`: no live incarnation at the address. */
export type DocState = DocIncarnation | null;

/** What one commit did to one document address. */
export interface DocChange {
  readonly addressKey: string;
  readonly address: DocumentAddress;
  /** The state the commit started from (for a cache slot evicted meanwhile). */
  readonly basedOn: DocState;
  readonly state: DocState;
  /** Ops from the previous value to `state.value` (`[["r", value]]` for a new incarnation, `[]` for a retirement). */
  readonly ops: readonly Op[];
}

/** A commit whose callback finished and whose writes are prepared (one overlay layer). */
export interface PreparedCommit {
  readonly writes: StorageWrite[];
  /**
   * The size counted for the writes' values, in bytes of JSON text (an
   * upper bound; exact when the bound was over the commit limit): what the
   * flusher adds up to keep a storage call within its budget.
   */
  readonly bytes: number;
  readonly deferred: boolean;
  readonly conversations: readonly ConversationRecord[];
  readonly entries: readonly EntryRecord[];
  readonly tasks: readonly TaskRecord[];
  readonly submissions: readonly SubmissionRecord[];
  readonly docs: readonly DocChange[];
  /** Code to run once the commit is stored and published (internal hook for tasks and harness). */
  readonly afterCommit: readonly ((info: CommitInfo) => void)[];
}

/** What a commit's `afterCommit` hooks and the commit promise learn. */
export interface CommitInfo {
  /** Seq of the batch that carried the commit; `undefined` for a commit that wrote nothing or is deferred and not yet stored. */
  readonly seq: Seq | undefined;
}
