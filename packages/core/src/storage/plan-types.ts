import type { DocumentId, Seq } from "../domain/ids.js";
import type { Json } from "../domain/json.js";
import type {
  ConversationRecord,
  DocumentRecord,
  EntryRecord,
  SubmissionRecord,
  TaskRecord,
} from "../domain/records.js";
import type { BaseContent, DocumentAddress, DocumentContent } from "./port.js";

/** A live document's value as the planner and the backends keep it. */
export interface CurrentValue {
  version: number;
  value: Json;
  /** Deltas applied on top of the newest base to reach `value`. */
  deltasSinceBase: number;
}

/** What the planner needs to know about a stored document incarnation. */
export interface PlanDocument {
  createdAt: number;
  /** The seq it was retired at; `undefined` while live. */
  retiredAt: number | undefined;
  /** Session and task scope, and conversation scope unless `history: "rewindable"`. */
  currentOnly: boolean;
  /** Seq of the newest base: a current-only document keeps no history before it. */
  newestBaseSeq: number;
}

/**
 * The stored state a batch is checked against, as a backend answers it:
 * what was stored before the current `commit` call (the planner keeps the
 * effects of the call's earlier batches itself). Every answer is
 * synchronous; a backend that must do I/O fetches `CommitCall.needs()` first.
 *
 * "Absent" answers for ids and addresses the batches create
 * (`PlanNeeds.newConversations`, `newEntries`, `newDocuments`, `addresses`)
 * may be optimistic when the backend's apply step enforces their uniqueness
 * itself (a unique index) and reports a `WriteConflict`; every other answer
 * must be exact.
 */
export interface PlanView {
  /** Seq of the newest batch stored before this call (0 on a new storage). */
  readonly lastSeq: number;
  hasConversation(id: number): boolean;
  hasEntry(id: number): boolean;
  /** The stored incarnation with this id, live or retired; `undefined` when there is none. */
  document(id: number): PlanDocument | undefined;
  /** The current value of a live stored document (asked only after `document(id)` found it live). */
  current(id: number): CurrentValue;
  /** The live incarnation at the address, if any. */
  liveAt(address: DocumentAddress): number | undefined;
  /**
   * The value of a stored document at a past seq (asked only when
   * `document(id)` shows it live there, `at <= lastSeq`, and its history is
   * kept there: rewindable, or current-only at or after its newest base).
   */
  valueAt(id: number, at: number): CurrentValue;
}

/** What planning a call will ask the view, for backends that fetch state before they plan. */
export interface PlanNeeds {
  /** Conversations the writes refer to (parents, and the conversation of each entry, task and submission). */
  conversations: ReadonlySet<number>;
  /** Documents changed, retired or copied at "current": their state (`document`). */
  documents: ReadonlySet<number>;
  /** Of those, the ones whose current value the planner needs (`current`): delta targets, copies at "current". */
  values: ReadonlySet<number>;
  /** Ids the writes create (answers may be optimistic, see `PlanView`). */
  newConversations: ReadonlySet<number>;
  newEntries: ReadonlySet<number>;
  newDocuments: ReadonlySet<number>;
  /** Addresses of created documents (answers may be optimistic, see `PlanView`). */
  addresses: readonly DocumentAddress[];
  /** Copies at a seq: the source's value there (`valueAt`) and its state (`document`). */
  history: readonly { id: number; at: number }[];
}

/** One write of a planned batch; `index` is its position in the batch as written. */
export type PlannedWrite =
  | { type: "conversation"; index: number; value: ConversationRecord }
  | { type: "entry"; index: number; value: EntryRecord }
  | { type: "task"; index: number; value: TaskRecord }
  | { type: "submission"; index: number; value: SubmissionRecord }
  /** A new incarnation, created or copied: `record` carries `createdAt`, `content` its base. */
  | {
      type: "document.create";
      index: number;
      record: DocumentRecord;
      content: BaseContent;
      currentOnly: boolean;
      /** Set for a `document.copy`: the source it was copied from. */
      copiedFrom?: { id: DocumentId; at: Seq | "current" };
    }
  /** `after` is the document's value once this content is applied. */
  | {
      type: "document.change";
      index: number;
      id: DocumentId;
      content: DocumentContent;
      after: CurrentValue;
      currentOnly: boolean;
    }
  | { type: "document.retire"; index: number; id: DocumentId; currentOnly: boolean };

/** A batch that passed every check: what to store, in apply order, under `seq`. */
export interface BatchPlan {
  readonly seq: number;
  /** The writes in the order to apply them: as written, except that retirements come last. */
  readonly writes: readonly PlannedWrite[];
  /** The highest record id the batch writes: raise the persisted id high-water mark with it. */
  readonly highestId: number;
}

/**
 * Why a backend could not store write `writeIndex` of batch `batchIndex`
 * after planning: a uniqueness it left to its apply step (see `PlanView`)
 * failed there (the write creates an id or takes an address that is already
 * stored), or the value cannot be encoded for it (`unstorable`: too large for
 * the engine to serialise). The front turns it into the refusal of that batch.
 */
export interface WriteConflict {
  batchIndex: number;
  writeIndex: number;
  kind:
    "conversation-exists" | "entry-exists" | "document-exists" | "address-occupied" | "unstorable";
  /** For `address-occupied`: the live incarnation holding the address, when known. */
  holder?: number;
  /** For `unstorable`: what the encoder said (a `RangeError` message). */
  detail?: string;
}
