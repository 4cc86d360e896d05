declare const brand: unique symbol;

/** A compile-time brand; on disk and at run time these are plain numbers. */
export type Brand<T, B extends string> = T & { readonly [brand]: B };

export type ConversationId = Brand<number, "ConversationId">;
export type EntryId = Brand<number, "EntryId">;
export type TaskId = Brand<number, "TaskId">;
export type SubmissionId = Brand<number, "SubmissionId">;
export type DocumentId = Brand<number, "DocumentId">;
/** Commit sequence number: strictly increasing per storage, gaps allowed, first is 1. */
export type Seq = Brand<number, "Seq">;

export type AnyId = ConversationId | EntryId | TaskId | SubmissionId | DocumentId;

/** The root conversation always has id 1; `mintId` never returns it. */
export const ROOT_CONVERSATION_ID = 1 as ConversationId;

/** True for the numbers usable as ids and seqs: positive safe integers. */
export function isPositiveSafeInteger(value: unknown): value is number {
  return typeof value === "number" && Number.isSafeInteger(value) && value > 0;
}

function shown(value: unknown): string {
  if (typeof value === "number") return String(value);
  if (typeof value === "string") return JSON.stringify(value);
  return value === null ? "null" : typeof value;
}

/*
 * Typed ids from plain numbers (read from a URL, a CLI argument, a table of
 * your own), checked instead of cast: anything but a positive safe integer
 * throws a TypeError naming the kind and the value. They check the shape
 * only; whether such a record exists is for a read to say.
 */
function branded<T extends number>(kind: string, value: number): T {
  if (isPositiveSafeInteger(value)) return value as T;
  throw new TypeError(`${kind}(${shown(value)}): ids and seqs are positive safe integers`);
}

/** `value` as a `ConversationId`; throws a `TypeError` unless it is a positive safe integer. */
export function conversationId(value: number): ConversationId {
  return branded("conversationId", value);
}
/** `value` as an `EntryId`; throws a `TypeError` unless it is a positive safe integer. */
export function entryId(value: number): EntryId {
  return branded("entryId", value);
}
/** `value` as a `TaskId`; throws a `TypeError` unless it is a positive safe integer. */
export function taskId(value: number): TaskId {
  return branded("taskId", value);
}
/** `value` as a `SubmissionId`; throws a `TypeError` unless it is a positive safe integer. */
export function submissionId(value: number): SubmissionId {
  return branded("submissionId", value);
}
/** `value` as a `DocumentId`; throws a `TypeError` unless it is a positive safe integer. */
export function documentId(value: number): DocumentId {
  return branded("documentId", value);
}
/** `value` as a `Seq`; throws a `TypeError` unless it is a positive safe integer. */
export function seq(value: number): Seq {
  return branded("seq", value);
}
