/**
 * Every error Durably throws on purpose is one of these classes. `name` and
 * `code` are stable API: match on them, not on messages.
 */
export abstract class DurablyError extends Error {
  abstract readonly code: string;
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
  }
}

/** The session hit an uncertain storage failure; every later call rejects. Close and reopen. */
export class SessionFailed extends DurablyError {
  override readonly name = "SessionFailed";
  readonly code = "SESSION_FAILED";
  constructor(message: string, options: { cause: unknown }) {
    super(message, options);
  }
}

/** The session (or storage) was closed; the call cannot run. */
export class SessionClosed extends DurablyError {
  override readonly name = "SessionClosed";
  readonly code = "SESSION_CLOSED";
}

export type StorageRequestReason =
  "bad-cursor" | "bad-limit" | "bad-query" | "bad-argument" | "history-unavailable";

/** A read was malformed (bad cursor, limit, query field, argument). Only that read fails. */
export class StorageRequestError extends DurablyError {
  override readonly name = "StorageRequestError";
  readonly code = "STORAGE_REQUEST";
  readonly reason: StorageRequestReason;
  constructor(reason: StorageRequestReason, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.reason = reason;
  }
}

/** Where stored data was found broken: a file and line, a key, a table row. */
export interface CorruptionLocation {
  readonly file?: string;
  readonly line?: number;
  readonly key?: string;
  readonly table?: string;
  readonly documentId?: number;
  readonly seq?: number;
}

/** Stored data is broken (missing base, broken op, torn confirmed record). Never guessed around. */
export class StorageCorrupted extends DurablyError {
  override readonly name = "StorageCorrupted";
  readonly code = "STORAGE_CORRUPTED";
  readonly location: CorruptionLocation;
  constructor(message: string, location: CorruptionLocation = {}, options?: { cause?: unknown }) {
    super(message, options);
    this.location = location;
  }
}

/** Another live process owns this storage (single-owner rule). */
export class StorageLocked extends DurablyError {
  override readonly name = "StorageLocked";
  readonly code = "STORAGE_LOCKED";
  readonly holder: string | undefined;
  constructor(message: string, options?: { holder?: string; cause?: unknown }) {
    super(message, options);
    this.holder = options?.holder;
  }
}

/** The storage instance saw an uncertain write failure; every later call rejects until reopen. */
export class StoragePoisoned extends DurablyError {
  override readonly name = "StoragePoisoned";
  readonly code = "STORAGE_POISONED";
  constructor(message: string, options: { cause: unknown }) {
    super(message, options);
  }
}

/**
 * The operating system or the storage's library reported an I/O failure
 * (EIO, ENOSPC, a driver's I/O error) while opening, reading or closing, and
 * nothing suggests stored data is damaged. `location` names the file, key or
 * table where known; `cause` holds the original error. Retrying after the
 * fault is fixed may succeed. An uncertain *write* failure poisons the
 * storage instead (`StoragePoisoned`).
 */
export class StorageIOError extends DurablyError {
  override readonly name = "StorageIOError";
  readonly code = "STORAGE_IO";
  readonly location: CorruptionLocation;
  constructor(message: string, location: CorruptionLocation = {}, options?: { cause?: unknown }) {
    super(message, options);
    this.location = location;
  }
}

/** The storage was closed; the call cannot run. */
export class StorageClosed extends DurablyError {
  override readonly name = "StorageClosed";
  readonly code = "STORAGE_CLOSED";
}

/** A stored schema or format is newer than this code understands. */
export class StorageVersionError extends DurablyError {
  override readonly name = "StorageVersionError";
  readonly code = "STORAGE_VERSION";
}

export type RefusalReason =
  | "invalid-write"
  | "duplicate-id"
  | "immutable-record"
  | "unknown-conversation"
  | "unknown-document"
  | "retired-document"
  | "address-occupied"
  | "double-content"
  | "version-crossing";

/** Returned (not thrown) by `storage.commit` as `refused` for the first batch it would not store. */
export class BatchRefused extends DurablyError {
  override readonly name = "BatchRefused";
  readonly code = "BATCH_REFUSED";
  readonly reason: RefusalReason;
  /** Index of the refused batch within the `commit` call. */
  readonly batchIndex: number;
  /** Index of the offending write within that batch. */
  readonly writeIndex: number;
  constructor(reason: RefusalReason, batchIndex: number, writeIndex: number, message: string) {
    super(`batch ${batchIndex} write ${writeIndex}: ${message}`);
    this.reason = reason;
    this.batchIndex = batchIndex;
    this.writeIndex = writeIndex;
  }
}

/** A table read after the transaction's first table write. */
export class ReadAfterWrite extends DurablyError {
  override readonly name = "ReadAfterWrite";
  readonly code = "READ_AFTER_WRITE";
}

/** A submission with `whenBusy: "reject"` met a conversation that is running. */
export class ConversationBusy extends DurablyError {
  override readonly name = "ConversationBusy";
  readonly code = "CONVERSATION_BUSY";
}

/**
 * `session.commit` was called from inside a commit callback: the nested
 * commit would wait for the line the callback holds, and the callback for
 * it. Write through the callback's `tx` instead.
 */
export class NestedCommit extends DurablyError {
  override readonly name = "NestedCommit";
  readonly code = "NESTED_COMMIT";
}

/** A draft or transaction was used after its commit callback settled. */
export class DraftRevoked extends DurablyError {
  override readonly name = "DraftRevoked";
  readonly code = "DRAFT_REVOKED";
}

/** A transaction named a record that does not exist (unknown conversation, task, entry...). */
export class UnknownRecord extends DurablyError {
  override readonly name = "UnknownRecord";
  readonly code = "UNKNOWN_RECORD";
}

/** A stored document version is newer than the definition reading it. */
export class DocumentVersionError extends DurablyError {
  override readonly name = "DocumentVersionError";
  readonly code = "DOCUMENT_VERSION";
}

/** A document op does not apply to the value it was given. */
export class InvalidOp extends DurablyError {
  override readonly name = "InvalidOp";
  readonly code = "INVALID_OP";
  readonly opIndex: number;
  constructor(opIndex: number, message: string) {
    super(`op ${opIndex}: ${message}`);
    this.opIndex = opIndex;
  }
}

/** The scheduler found a task it cannot run as stored (no progress, unknown phase, missing migrate...); stored as a `faulted` outcome. */
export class TaskFaulted extends DurablyError {
  override readonly name = "TaskFaulted";
  readonly code = "TASK_FAULTED";
}

/** A task runtime was used when its task is not running for it (finished, waiting, or the run ended). */
export class TaskStateError extends DurablyError {
  override readonly name = "TaskStateError";
  readonly code = "TASK_STATE";
}

/** An at-most-once memo found its intent marker without a result: the effect may or may not have run. */
export class MemoInterrupted extends DurablyError {
  override readonly name = "MemoInterrupted";
  readonly code = "MEMO_INTERRUPTED";
  readonly key: string;
  constructor(key: string, message: string) {
    super(message);
    this.key = key;
  }
}

/**
 * A value over a size limit, refused at the call before any I/O: over
 * `MAX_VALUE_BYTES` (or the session's `limits.valueBytes`) of JSON text, or
 * a kind or key over its limit. A `TypeError`, as every refused input is,
 * with what was refused (`where`, e.g. `entry.data`) and both sizes, so a
 * caller can say which of its values did not fit without reading the message.
 */
export class ValueTooLarge extends TypeError {
  declare readonly code: "VALUE_TOO_LARGE";
  declare readonly where: string;
  declare readonly bytes: number;
  declare readonly limit: number;
  constructor(message: string, where: string, bytes: number, limit: number) {
    super(message);
    // Not enumerable: it compares, prints and serialises as the TypeError it always was.
    for (const [key, value] of Object.entries({ code: "VALUE_TOO_LARGE", where, bytes, limit }))
      Object.defineProperty(this, key, { value, enumerable: false });
  }
}
